"""The migration of issue 48's catch-trial rule counts, per intruder, the catch trials they
already named someone for: the flag reads that count from now on."""

from __future__ import annotations

import pytest

from tests.migrations import at_migration, migrate_to, old_study

BEFORE = [("intruder", "0031_issue49_surname_rule")]
AFTER = [("intruder", "0032_issue48_catch_trials_per_participant")]


@pytest.mark.django_db(transaction=True)
def test_the_migration_counts_each_intruders_named_catch_trials():
    with at_migration(BEFORE) as old:
        study = old_study(old, "catch")
        texts = []
        for key, catch in [("real", False), ("catch_1", True), ("catch_2", True)]:
            target = old.get_model("intruder", "TargetPerson").objects.create(
                study=study, key=key, name=f"Person {key}", group="fictitious", catch=catch
            )
            description = old.get_model("intruder", "Description").objects.create(
                study=study, target=target, text="A keeper of bees."
            )
            texts.append(
                old.get_model("intruder", "AnonymizedText").objects.create(
                    description=description, text="A keeper of bees.", status="released"
                )
            )
        Participant = old.get_model("intruder", "Participant")
        Assignment = old.get_model("intruder", "Assignment")
        Judgment = old.get_model("intruder", "Judgment")
        # Names said for: every text; the real text and one catch trial; a "yes" with no
        # name for both catch trials (not a naming); nothing.
        plans = {
            "all": ["Adele", "Adele", "Adele"],
            "one": ["Adele", "Adele", ""],
            "blank": ["", " ", " "],
            "none": ["", "", ""],
        }
        pids = {}
        for n, (who, names) in enumerate(plans.items()):
            participant = Participant.objects.create(
                study=study, prolific_pid=f"PID{n:021d}", prolific_session_id=f"S{n}"
            )
            pids[who] = participant.pk
            for position, (text, name) in enumerate(zip(texts, names, strict=True), 1):
                assignment = Assignment.objects.create(
                    participant=participant,
                    text=text,
                    position=position,
                    slot=n + 1,
                    status="completed",
                )
                Judgment.objects.create(
                    assignment=assignment,
                    participant=participant,
                    text=text,
                    self_identified=name != "",
                    guessed_name=name.strip(),
                )
        new = migrate_to(AFTER)
        counts = dict(
            new.get_model("intruder", "Participant").objects.values_list("pk", "catch_named")
        )
        assert {who: counts[pk] for who, pk in pids.items()} == {
            "all": 2,
            "one": 1,
            "blank": 0,
            "none": 0,
        }
