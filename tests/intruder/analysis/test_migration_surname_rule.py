"""The migration of issue 49's finding fills in whether each stored guess holds the person's
surname; every study keeps its rule, so no stored identification changes."""

from __future__ import annotations

import pytest

from tests.migrations import at_migration, migrate_to, old_study

BEFORE = [("intruder", "0030_issue50_names")]
AFTER = [("intruder", "0031_issue49_surname_rule")]


@pytest.mark.django_db(transaction=True)
def test_the_migration_fills_the_surname_test_and_changes_no_identification():
    with at_migration(BEFORE) as old:
        study = old_study(old, "kate", identification_rule="best_match")
        kate = old.get_model("intruder", "TargetPerson").objects.create(
            study=study, key="kate", name="Kate Middleton", group="famous", aliases=["Catherine"]
        )
        description = old.get_model("intruder", "Description").objects.create(
            study=study, target=kate, text="A duchess."
        )
        text = old.get_model("intruder", "AnonymizedText").objects.create(
            description=description, text="A duchess.", status="released"
        )
        Participant = old.get_model("intruder", "Participant")
        Assignment = old.get_model("intruder", "Assignment")
        Judgment = old.get_model("intruder", "Judgment")
        stored = {}
        for slot, guess in enumerate(["Kate Winslet", "Kate Midleton", "Catherine", ""], 1):
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
                cosine=0.8 if guess else 0.0,
                identified=bool(guess),
            ).pk
        new = migrate_to(AFTER)
        rows = new.get_model("intruder", "Judgment").objects.in_bulk(list(stored.values()))
        agrees = {guess: rows[pk].surname_agrees for guess, pk in stored.items()}
        assert agrees == {
            "Kate Winslet": False,
            "Kate Midleton": True,
            "Catherine": True,  # the alias, a one-word name
            "": None,
        }
        assert [rows[pk].identified for pk in stored.values()] == [True, True, True, False]
        assert new.get_model("intruder", "Study").objects.get().identification_rule == "best_match"
