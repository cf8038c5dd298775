"""The migration that makes Prolific study IDs unique stops, naming the studies, when two
already share one (issue 37): which of them owns the Prolific study is the operator's call."""

from __future__ import annotations

import pytest

from tests.migrations import at_migration, migrate_to, old_study

BEFORE = [("intruder", "0017_h25report_computed_reports")]
AFTER = [("intruder", "0018_issue37_one_study_per_prolific_study")]


@pytest.mark.django_db(transaction=True)
def test_shared_ids_stop_the_migration_until_one_is_cleared():
    with at_migration(BEFORE) as old:
        Study = old.get_model("intruder", "Study")
        for slug in ("first", "second"):
            old_study(old, slug, prolific_study_id="shared01")
        with pytest.raises(RuntimeError, match="shared01: first, second"):
            migrate_to(AFTER)
        Study.objects.filter(slug="second").update(prolific_study_id="")
        migrate_to(AFTER)
