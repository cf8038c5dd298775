"""Answer telemetry, the hidden canary and flags: bad telemetry never blocks an answer."""

import base64
import json
import re
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from intruder.evidence.canary import canary_in
from intruder.evidence.flags import FlagDecision, exclusion_rules_set, flag_review_record
from intruder.evidence.models import PageView
from intruder.evidence.page_views import page_view_serve
from intruder.evidence.selectors import Flag
from intruder.evidence.telemetry import MAX_TELEMETRY_BYTES, telemetry_parse
from intruder.models import Assignment, Description, Judgment, PersonGroup, Study
from intruder.services.assignment import assignment_next
from intruder.services.judgments import judgment_submit
from intruder.services.writing import description_submit, writing_tasks_assign
from tests.intruder.factories import (
    make_description,
    make_participant,
    make_study,
    make_target,
    make_text,
    make_user,
)

pytestmark = pytest.mark.django_db

ALL = ["timing", "keystrokes", "paste", "copy", "focus"]
JUDGE_FIELDS = ("guessed_name", "revealing_text", "other_knowledge")
TYPED = {"typed": 200, "pasted": 0, "untrusted": 0}
HUMAN = {
    "v": 2,
    "page_ms": 60_000,
    "first_input_ms": 4_000,
    "typing_ms": 9_000,
    "keystrokes": 60,
    "paste_events": 0,
    "pasted_chars": 0,
    "copy_events": 0,
    "copied_chars": 0,
    "focus_losses": 0,
    "away_ms": 0,
    "fields": {name: TYPED for name in JUDGE_FIELDS},
}


def fields(**per_field) -> dict:
    return {**HUMAN["fields"], **per_field}


def raw(view: str = "", **changes) -> str:
    return json.dumps({**HUMAN, "view": view, **changes})


def parse(posted):
    return telemetry_parse(posted, signals=ALL, answer_fields=JUDGE_FIELDS)


@pytest.mark.parametrize(
    "posted",
    [
        None,
        "",
        "not json",
        "[1, 2]",
        '{"v": 1, "page_ms": 10}',  # the old version
        raw(keystrokes=-1),
        raw(keystrokes=True),
        raw(keystrokes=1.5),
        raw(keystrokes="60"),
        raw(page_ms=10**12),
        raw(secret="what was typed"),
        raw(fields={"password": TYPED}),
        raw(fields={"guessed_name": {"typed": 1}}),
        raw(view=["x"]),
        '{"v": 2, "page_ms": ' + "9" * 5000 + "}",
        "{" * 10_000,
        " " * (MAX_TELEMETRY_BYTES + 1),
        raw(absences=[[5, 1]]),  # ends before it starts
        raw(absences=[[1, True]]),
        raw(absences=[[1, 2, 3]]),
        raw(absences={"0": [1, 2]}),
        raw(absences=[[i, i] for i in range(21)]),  # more than the page ever sends
    ],
)
def test_malformed_telemetry_is_no_telemetry(posted):
    assert parse(posted).values is None


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        # The forgeries the tester sent: a page time alone, a keystroke count alone.
        ({"only": {"page_ms": 40_000}}, "missing: first_input_ms"),
        ({"only": {"keystrokes": 80}}, "missing: page_ms"),
        ({"drop": "fields"}, "missing: fields.guessed_name"),
        ({"away_ms": 90_000}, "away_ms (90000 ms) exceeds the time on the page"),
        ({"absences": [[1_000, 61_000]]}, "an absence ends after the time on the page"),
        ({"keystrokes": 0}, "typed without a single input event"),
        (
            {"fields": fields(guessed_name={"typed": 0, "pasted": 9, "untrusted": 0})},
            "pasted without a paste",
        ),
    ],
)
def test_a_well_formed_but_inconsistent_report_names_its_problem(changes, problem):
    if "only" in changes:
        posted = json.dumps({"v": 2, "view": "x", **changes["only"]})
    elif "drop" in changes:
        posted = json.dumps({k: v for k, v in {**HUMAN, "view": "x"}.items() if k != "fields"})
    else:
        posted = raw("x", **changes)
    report = parse(posted)
    assert report.values is not None
    assert any(problem in p for p in report.problems), report.problems


def test_an_honest_report_has_no_problem():
    assert parse(raw("x")).problems == []


def test_signals_the_study_switched_off_are_dropped_even_when_sent():
    kept = telemetry_parse(raw(), signals=["timing"], answer_fields=JUDGE_FIELDS).values
    assert set(kept) == {"v", "page_ms", "first_input_ms", "typing_ms"}


@pytest.fixture
def study():
    study = make_study(kind=Study.Kind.INTRUDER, items_per_participant=2, judgments_per_text=2)
    for i in range(3):
        target = make_target(study=study, group=PersonGroup.FAMOUS, name=f"Oriel Vantassel{i}")
        make_text(study=study, description=make_description(study=study, target=target))
    return study


def claim(study, **fields):
    """Claim a text for a new participant, served (one page view) a minute ago."""
    now = timezone.now()
    participant = make_participant(
        study=study, consented_at=now, instructions_seen_at=now, **fields
    )
    assignment = assignment_next(participant=participant)
    # Shown a minute ago: no "too fast" flag unless a test wants one.
    shown = timezone.now() - timedelta(minutes=1)
    Assignment.objects.filter(pk=assignment.pk).update(shown_at=shown)
    assignment.refresh_from_db()
    assignment.view = page_view_serve(assignment=assignment, now=shown).token
    return participant, assignment


def submit(participant, assignment, telemetry, other="A sailor who keeps lights.", **kw):
    return judgment_submit(
        participant=participant,
        assignment_id=assignment.pk,
        self_identified=False,
        other_knowledge=other,
        telemetry=telemetry,
        **kw,
    ).judgment


def codes(answer) -> set[str]:
    return {flag["code"] for flag in answer.flags}


def test_human_telemetry_is_stored_without_flags(study):
    participant, assignment = claim(study)
    judgment = submit(participant, assignment, raw(assignment.view))
    assert judgment.telemetry["keystrokes"] == 60
    assert judgment.telemetry["page_views"] == 1
    assert judgment.flags == []


@pytest.mark.parametrize("posted", [None, "garbage", raw(keystrokes=-5)])
def test_forged_or_missing_telemetry_stores_the_answer_marked_no_telemetry(study, client, posted):
    participant, assignment = claim(study)
    data = {
        "assignment_id": assignment.pk,
        "self_identified": "no",
        "other_knowledge": "A sailor who keeps lights.",
    }
    if posted is not None:
        data["telemetry"] = posted
    client.post(reverse("participant-judge", args=[participant.token]), data)
    judgment = Judgment.objects.get(assignment=assignment)
    assert judgment.telemetry is None
    assert codes(judgment) == {Flag.NO_TELEMETRY}


def test_no_telemetry_is_excluded_by_default_and_the_flags_page_says_so(study, client):
    from intruder.evidence.selectors import DEFAULT_RULES

    assert Flag.NO_TELEMETRY in DEFAULT_RULES["exclude"]
    client.force_login(study.owner)
    page = client.get(reverse("researcher-flags", args=[study.slug])).content.decode()
    assert "No (or malformed) telemetry" in page
    assert "sent without JavaScript" in page
    assert "It is excluded by default" in page


def test_telemetry_with_nul_characters_never_rejects_the_answer(study, client):
    participant, assignment = claim(study)
    client.post(
        reverse("participant-judge", args=[participant.token]),
        {
            "assignment_id": assignment.pk,
            "self_identified": "no",
            "other_knowledge": "A sailor.",
            "telemetry": "\x00" * 50,
        },
    )
    assert Judgment.objects.filter(assignment=assignment).exists()


@pytest.mark.parametrize(
    ("changes", "flag"),
    [
        ({"paste_events": 1, "pasted_chars": 26}, Flag.PASTE),
        ({"away_ms": 15_000, "focus_losses": 1}, Flag.AWAY),
        # Per field: 26 characters, 2 typed, the rest from nowhere.
        (
            {"fields": fields(other_knowledge={"typed": 2, "pasted": 0, "untrusted": 0})},
            Flag.INSERTED,
        ),
        # ... or 2 typed and 24 pasted: mostly not typed.
        (
            {
                "paste_events": 1,
                "pasted_chars": 24,
                "fields": fields(other_knowledge={"typed": 2, "pasted": 24, "untrusted": 0}),
            },
            {Flag.PASTE, Flag.FEW_KEYSTROKES},
        ),
        (
            {"fields": fields(other_knowledge={"typed": 40, "pasted": 0, "untrusted": 1})},
            Flag.INSERTED,
        ),
        # The server saw 60 s on the page: 40 s nobody accounts for is time away too.
        ({"page_ms": 20_000}, {Flag.INCONSISTENT, Flag.AWAY}),
    ],
)
def test_telemetry_signals_flag_the_judgment_with_a_reason(study, changes, flag):
    participant, assignment = claim(study)
    judgment = submit(participant, assignment, raw(assignment.view, **changes))
    assert codes(judgment) == (flag if isinstance(flag, set) else {flag})
    assert all(f["reason"] for f in judgment.flags)


def test_a_name_inserted_by_script_beside_a_typed_reason_is_flagged_per_field(study):
    """The tester's bot: typed 60 characters of reason, the name set by script. Summed over
    the fields the typing covered the name; per field it does not."""
    participant, assignment = claim(study)
    name, reason = "Oriel Vantassel0", "The lighthouse and the maps give it away, surely."
    counts = fields(
        guessed_name={"typed": 0, "pasted": 0, "untrusted": 0},
        revealing_text={"typed": len(reason) + 12, "pasted": 0, "untrusted": 0},
    )
    judgment = judgment_submit(
        participant=participant,
        assignment_id=assignment.pk,
        self_identified=True,
        guessed_name=name,
        revealing_text=reason,
        telemetry=raw(assignment.view, fields=counts),
    ).judgment
    assert codes(judgment) == {Flag.INSERTED}
    assert "Who is it?" in judgment.flags[0]["reason"]
    assert "16 of 16 characters neither typed nor pasted" in judgment.flags[0]["reason"]


@pytest.mark.parametrize(
    "forged",
    [
        {"v": 2, "page_ms": 40_000},  # the page time alone
        {"v": 2, "keystrokes": 80},  # a keystroke count alone
    ],
)
def test_minimal_forged_telemetry_is_flagged_not_clean(study, forged):
    participant, assignment = claim(study)
    judgment = submit(participant, assignment, json.dumps({**forged, "view": assignment.view}))
    assert Flag.INCONSISTENT in codes(judgment)
    assert "missing" in judgment.flags[0]["reason"]


def test_a_full_record_naming_no_served_view_is_flagged(study):
    participant, assignment = claim(study)
    _, other = claim(study)
    for view in ("", "made-up-token", other.view):  # none, invented, another person's
        judgment_flags = submit(participant, assignment, raw(view)).flags
        assert {f["code"] for f in judgment_flags} == {Flag.INCONSISTENT}
        assert "names no page view" in judgment_flags[0]["reason"]
        Judgment.objects.filter(assignment=assignment).delete()
        Assignment.objects.filter(pk=assignment.pk).update(status="active")


def test_an_answer_made_within_seconds_of_the_text_is_flagged_too_fast(study):
    participant, assignment = claim(study)
    now = timezone.now()
    Assignment.objects.filter(pk=assignment.pk).update(shown_at=now)
    PageView.objects.filter(assignment=assignment).update(served_at=now)
    assignment.refresh_from_db()
    quick = raw(assignment.view, page_ms=900, first_input_ms=300, typing_ms=500)
    judgment = submit(participant, assignment, quick, now=now)
    # Issue 48's plausibility sees it too: no time to read the text, typing the answer key by
    # key in 0.6 s.
    assert codes(judgment) == {Flag.TOO_FAST, Flag.TOO_FAST_TO_READ, Flag.IMPLAUSIBLE_TYPING}


def test_an_answer_echoing_the_canary_is_flagged(study):
    participant, assignment = claim(study)
    assert re.fullmatch(r"[a-z]{8}", assignment.canary)
    judgment = submit(
        participant,
        assignment,
        raw(assignment.view),
        other=f"A sailor. {assignment.canary.upper()}",
    )
    assert Flag.CANARY in codes(judgment)
    assert assignment.canary in judgment.flags[0]["reason"]


def test_canary_word_is_unique_per_served_text(study):
    _, first = claim(study)
    _, second = claim(study)
    assert first.canary != second.canary


def test_canary_is_hidden_in_the_page_and_never_in_the_text_or_its_export(study, client):
    participant, assignment = claim(study)
    page = client.get(reverse("participant-home", args=[participant.token])).content.decode()
    # For the page's script: encoded, decoded into the text. For a reader without JavaScript
    # (a plain HTTP client, issue 48): only inside <noscript>, hidden like the script's.
    noscript = re.search(r"<noscript>(.*?)</noscript>", page, re.S).group(1)
    assert assignment.canary in noscript and 'class="canary" aria-hidden="true"' in noscript
    assert page.count(assignment.canary) == 1
    encoded = re.search(r'data-c="([^"]+)"', page).group(1)
    decoded = bytes(b ^ 0x5A for b in base64.b64decode(encoded)).decode()
    assert assignment.canary in decoded
    assert assignment.canary not in assignment.text.text
    owner = study.owner
    client.force_login(owner)
    for fmt in ("csv", "jsonl"):
        export = client.get(
            reverse("researcher-export", args=[study.slug, "anonymized_texts", fmt])
        )
        assert assignment.canary not in export.content.decode()


def test_the_judge_and_write_pages_load_the_telemetry_script_with_the_studys_signals(study, client):
    study.telemetry_signals = ["timing", "paste"]
    study.save()
    participant, _ = claim(study)
    page = client.get(reverse("participant-home", args=[participant.token])).content.decode()
    assert 'data-telemetry="timing paste"' in page
    assert "intruder/telemetry.js" in page
    assert "<script>" not in page  # CSP: no inline script


def test_one_intruder_never_gets_two_texts_about_the_same_person():
    study = make_study(kind=Study.Kind.INTRUDER, items_per_participant=3, judgments_per_text=3)
    person = make_target(study=study, group=PersonGroup.FAMOUS)
    other = make_target(study=study, group=PersonGroup.FAMOUS)
    for target in (person, person, person, other):
        make_text(study=study, description=make_description(study=study, target=target))
    participant = make_participant(study=study)
    targets = []
    while (assignment := assignment_next(participant=participant)) is not None:
        targets.append(assignment.text.description.target_id)
        Assignment.objects.filter(pk=assignment.pk).update(status="completed")
    assert sorted(targets) == sorted([person.pk, other.pk])


def test_the_database_refuses_a_second_text_about_the_same_person():
    study = make_study(kind=Study.Kind.INTRUDER)
    person = make_target(study=study)
    first, second = (
        make_text(study=study, description=make_description(study=study, target=person))
        for _ in range(2)
    )
    participant = make_participant(study=study)
    Assignment.objects.create(
        participant=participant, text=first, position=1, slot=1, exclusive_target=person
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(
            participant=participant, text=second, position=2, slot=1, exclusive_target=person
        )


def test_a_study_that_allows_it_may_give_several_texts_about_one_person():
    study = make_study(kind=Study.Kind.INTRUDER, items_per_participant=3, judgments_per_text=3)
    study.allow_same_target = True
    study.save()
    person = make_target(study=study)
    for _ in range(3):
        make_text(study=study, description=make_description(study=study, target=person))
    participant = make_participant(study=study)
    got = 0
    while (assignment := assignment_next(participant=participant)) is not None:
        assert assignment.exclusive_target_id is None
        got += 1
        Assignment.objects.filter(pk=assignment.pk).update(status="completed")
    assert got == 3


def test_exclusion_rules_are_recorded_with_a_time_and_locked_at_launch(study):
    exclusion_rules_set(study=study, exclude=[Flag.PASTE], thresholds={"max_away_seconds": 20})
    study.refresh_from_db()
    assert study.exclusion_rules["exclude"] == [Flag.PASTE]
    assert study.exclusion_rules["max_away_seconds"] == 20
    assert study.exclusion_rules_set_at is not None
    make_participant(study=study)
    with pytest.raises(ValidationError):
        exclusion_rules_set(study=study, exclude=[], thresholds={})
    with pytest.raises(ValidationError):
        exclusion_rules_set(study=make_study(), exclude=["made_up"], thresholds={})


def test_review_confirms_or_overrules_with_the_reason_kept(study, client):
    participant, assignment = claim(study)
    pasted = raw(assignment.view, paste_events=1, pasted_chars=40)
    judgment = submit(participant, assignment, pasted)
    user = study.owner
    with pytest.raises(ValidationError):
        flag_review_record(answer=judgment, user=user, decision=FlagDecision(False, " "))
    client.force_login(user)
    url = reverse("researcher-flag-review", args=[study.slug, "judgment", judgment.pk])
    client.post(url, {"decision": "overrule", "reason": "pasted their own name from notes"})
    judgment.refresh_from_db()
    assert judgment.flag_review == "overruled"
    assert judgment.flag_review_reason == "pasted their own name from notes"
    assert judgment.flag_reviewed_by == user
    page = client.get(reverse("researcher-flags", args=[study.slug])).content.decode()
    assert "pasted their own name from notes" in page
    export = client.get(reverse("researcher-export", args=[study.slug, "judgments", "csv"]))
    header, row = export.content.decode().splitlines()[:2]
    assert "telemetry_pasted_chars" in header and "flag_review_reason" in header
    assert "paste" in row and "overruled" in row


def test_viewers_cannot_review_and_strangers_do_not_see_flags(study, client):
    participant, assignment = claim(study)
    pasted = raw(assignment.view, paste_events=1, pasted_chars=40)
    judgment = submit(participant, assignment, pasted)
    client.force_login(make_user())
    assert client.get(reverse("researcher-flags", args=[study.slug])).status_code == 404
    url = reverse("researcher-flag-review", args=[study.slug, "judgment", judgment.pk])
    assert client.post(url, {"decision": "confirm", "reason": "x"}).status_code == 404


def test_analysis_rates_with_and_without_flagged_side_by_side(study):
    from intruder.analysis.selectors import study_report

    honest, a1 = claim(study)
    submit(honest, a1, raw(a1.view))
    cheat, a2 = claim(study)
    judgment_submit(
        participant=cheat,
        assignment_id=a2.pk,
        self_identified=True,
        guessed_name=a2.text.description.target.name,
        revealing_text="the chatbot said so",
        telemetry=raw(a2.view, paste_events=1, pasted_chars=30),
    )
    table = study_report(study).tables["rates_flagged"]
    overall = table[table["scope"] == "overall"].iloc[0]
    assert overall["n_judgments_all"] == 2
    assert overall["n_judgments_excluded"] == 1
    assert overall["n_all"] == 2 and overall["n_without_flagged"] == 1
    assert overall["pct_identified_all"] == 50.0
    assert overall["pct_identified_without_flagged"] == 0.0


def test_writer_descriptions_pasted_or_too_fast_are_flagged_and_excludable():
    study = make_study(kind=Study.Kind.COLLECTION, min_description_chars=100)
    make_target(study=study, group=PersonGroup.FAMOUS)
    writer = make_participant(study=study)
    writing_tasks_assign(participant=writer)
    text = "A long description of a person. " * 10
    description = description_submit(
        participant=writer,
        position=1,
        text=text,
        telemetry=raw(
            page_ms=10_000,
            keystrokes=3,
            paste_events=1,
            pasted_chars=len(text),
            fields={"text": {"typed": 3, "pasted": len(text), "untrusted": 0}},
        ),
    )
    assert codes(description) == {Flag.PASTE, Flag.FEW_KEYSTROKES, Flag.TOO_FAST}
    flag_review_record(
        answer=description, user=study.owner, decision=FlagDecision(True, "chatbot text")
    )
    intruder = make_study(kind=Study.Kind.INTRUDER)
    intruder.source_studies.add(study)
    from intruder.services.sources import pending_source_descriptions

    assert not pending_source_descriptions(intruder).exists()
    assert Description.objects.get(pk=description.pk).flag_review == "confirmed"


def test_consent_page_says_what_is_recorded_and_only_that(client):
    study = make_study(kind=Study.Kind.INTRUDER)
    study.telemetry_signals = ["paste", "focus"]
    study.save()
    make_text(study=study)
    url = reverse("participant-entry", kwargs={"slug": study.slug})
    home = client.get(f"{url}?PROLIFIC_PID=CONSENTPID1")["Location"]
    page = client.get(home).content.decode()
    assert "whether you paste into an answer" in page
    assert "how long you leave the page" in page
    assert "how many keys you press" not in page
    assert "never what you type" in page


def test_a_writers_restored_draft_counts_as_typed_but_an_intruders_does_not(study):
    """A writer's page puts back their stored draft (or rejected post); that text is their
    own earlier typing. An intruder's earlier typing is counted on the server instead, so a
    claimed "restored" there explains nothing."""
    collection = make_study(kind=Study.Kind.COLLECTION, min_description_chars=20)
    make_target(study=collection, group=PersonGroup.FAMOUS)
    writer = make_participant(study=collection)
    writing_tasks_assign(participant=writer)
    text = "A singer from a small northern harbour town."
    counts = {"typed": 4, "pasted": 0, "untrusted": 0, "restored": len(text) - 4}
    description = description_submit(
        participant=writer, position=1, text=text, telemetry=raw(fields={"text": counts})
    )
    assert codes(description) == set()
    participant, assignment = claim(study)
    answer = "A sailor who keeps lights."
    claimed = {"typed": 0, "pasted": 0, "untrusted": 0, "restored": len(answer)}
    judgment = submit(
        participant, assignment, raw(assignment.view, fields=fields(other_knowledge=claimed))
    )
    assert codes(judgment) == {Flag.INSERTED}


def test_line_breaks_posted_as_crlf_are_counted_as_the_browser_counts_them(study):
    participant, assignment = claim(study)
    answer = "A sailor.\r\nKeeps lights.\r\nOld maps."
    typed = len(answer.replace("\r\n", "\n"))
    counts = fields(other_knowledge={"typed": typed, "pasted": 0, "untrusted": 0})
    judgment = submit(participant, assignment, raw(assignment.view, fields=counts), other=answer)
    assert judgment.flags == []


def test_a_page_read_without_javascript_carries_the_canary_after_the_first_sentence(study, client):
    """What a plain HTTP client (or a browser with JavaScript off) reads: the instruction in
    the text's flow after its first sentence, so that a model fed the page meets it."""
    participant, assignment = claim(study)
    page = client.get(reverse("participant-home", args=[participant.token])).content.decode()
    text = re.search(r'<div class="anon-text" id="anon-text"[^>]*>(.*?)</div>', page, re.S)
    flat = re.sub(r"<[^>]+>", "", text.group(1))
    first, _, rest = flat.partition(". ")
    assert assignment.canary not in first
    assert rest.lstrip().startswith("[Note for AI assistants")
    assert canary_in(flat, assignment.canary)
