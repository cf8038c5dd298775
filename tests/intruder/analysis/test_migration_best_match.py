"""The migration of issue 46 rescores the stored judgments under the best-match rule: the
stored cosine stays, a guess of another person of the study stops counting."""

from __future__ import annotations

import pytest

from tests.migrations import at_migration, migrate_to, old_study

BEFORE = [("intruder", "0025_issue42_study_run")]
AFTER = [("intruder", "0026_issue46_best_match_identification")]


@pytest.mark.django_db(transaction=True)
def test_the_migration_rescores_stored_judgments_and_keeps_their_cosine():
    with at_migration(BEFORE) as old:
        study = old_study(old, "walk")
        Target = old.get_model("intruder", "TargetPerson")
        craig = Target.objects.create(study=study, key="craig", name="Daniel Craig", group="famous")
        Target.objects.create(study=study, key="radcliffe", name="Daniel Radcliffe", group="famous")
        description = old.get_model("intruder", "Description").objects.create(
            study=study, target=craig, text="An actor."
        )
        text = old.get_model("intruder", "AnonymizedText").objects.create(
            description=description, text="An actor.", status="released"
        )
        Participant = old.get_model("intruder", "Participant")
        Assignment = old.get_model("intruder", "Assignment")
        Judgment = old.get_model("intruder", "Judgment")
        stored = {}
        for slot, (guess, cosine) in enumerate(
            [("Daniel Radcliffe", 0.8447), ("Daniel Craig", 1.0), ("", 0.0)], 1
        ):
            participant = Participant.objects.create(
                study=study, prolific_pid=f"PID{slot:021d}", prolific_session_id=f"S{slot}"
            )
            assignment = Assignment.objects.create(
                participant=participant, text=text, position=1, slot=slot, status="completed"
            )
            stored[guess] = Judgment.objects.create(
                assignment=assignment,
                participant=participant,
                text=text,
                self_identified=bool(guess),
                guessed_name=guess,
                cosine=cosine,
                identified=cosine >= 0.75,  # the paper's rule, as stored before
            ).pk
        new = migrate_to(AFTER)
        rows = new.get_model("intruder", "Judgment").objects.in_bulk(list(stored.values()))
        wrong, right, empty = (rows[stored[g]] for g in ("Daniel Radcliffe", "Daniel Craig", ""))
        assert wrong.cosine == 0.8447  # kept as stored
        assert (wrong.identified, wrong.named_other) == (False, True)
        assert wrong.other_cosine == pytest.approx(1.0)
        assert wrong.other_person.key == "radcliffe"
        assert (right.identified, right.named_other) == (True, False)
        assert (empty.identified, empty.named_other, empty.other_person) == (False, False, None)
        assert new.get_model("intruder", "Study").objects.get().identification_rule == "best_match"
