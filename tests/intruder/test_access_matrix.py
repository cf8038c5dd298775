"""One access matrix: every identity against every study, risk, preview, jobs and API endpoint.

Table-driven (role x endpoint -> expected status). The endpoint list is read from the
URLconf, so a new researcher page or API endpoint without a row here fails
`test_every_endpoint_has_an_expectation`. The annotation app's own pages are the matrix of
`tests/annotation/test_access_matrix.py`; the few it leaves out are rows here.

Identities: the study's owner, editor, viewer and PSI annotator; the manager, annotator and a
removed member of an annotation project built from the study's texts (no study role); a
crowd annotator of that project (no login, her own token in the session); anonymous.

Refusals: a researcher page sends anonymous callers to the login page, answers 404 to a
logged-in user without a study role (the study's existence is not revealed) and 403 to a
viewer who tries to change it (404 on the risk pages, which do not tell viewers an action
exists). The API answers 401, 404 and 403 in the same places. Allowed: anything below 500
that is not a refusal (a form error or a redirect after a post is allowed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from intruder.annotation import services as annotation
from intruder.annotation.models import ProjectMember, Task
from intruder.models import AnonymizedText, Job, StudyMember, TargetPerson
from intruder.risk.models import AttackRun, GuardResult, GuardRun
from intruder.services import anonymization
from tests.annotation import test_access_matrix as annotation_matrix
from tests.annotation.conftest import make_project
from tests.intruder import factories as f
from tests.intruder.fake_anonymizer import FakeAnonymizer

IDENTITIES = (
    "anonymous",
    "owner",
    "editor",
    "viewer",
    "psi_annotator",
    "manager",
    "annotator",
    "removed",
    "crowd",
)
NOT_LOGGED_IN = {"anonymous", "crowd"}
RESEARCHERS = set(IDENTITIES) - NOT_LOGGED_IN
READERS = {"owner", "editor", "viewer"}
EDITORS = {"owner", "editor"}
OWNERS = {"owner"}

# URL name prefixes (and the API namespace) of the areas this matrix covers.
AREAS = ("researcher-", "analysis-", "risk-", "api:", "annotation-")


@dataclass
class World:
    """The study, the linked annotation project, their people and a logged-in client each."""

    ids: dict[str, Any]
    users: dict[str, Any]
    clients: dict[str, Client] = field(default_factory=dict)


def _build() -> World:
    owner = f.make_user(username="matrix-owner")
    study = f.make_study(owner=owner, slug="matrix-study", title="Matrix study")
    texts = f.make_texts(study=study, count=3)
    draft = f.make_text(study=study, status=AnonymizedText.Status.DRAFT)
    participant = f.make_participant(study=study)
    judgment = f.make_judgment(participant=participant, text=texts[0])
    familiarity = participant.familiarity_answers.create(
        target=texts[0].description.target, heard_of=True
    )
    job = f.make_job(study=study, created_by=owner, status=Job.Status.FAILED)
    running = f.make_job(study=study, created_by=owner, kind="construct_loss")
    run = AttackRun.objects.create(study=study, attacks=["tfidf"], methods=["clear"])
    guard_run = GuardRun.objects.create(study=study, rank=2, budget=0.3, attacks=["tfidf"])
    guard_result = GuardResult.objects.create(
        run=guard_run, anonymized_text=draft, description=draft.description, target="t"
    )
    users = {
        "owner": owner,
        "editor": f.make_member(study=study, role=StudyMember.Role.EDITOR),
        "viewer": f.make_member(study=study, role=StudyMember.Role.VIEWER),
        "psi_annotator": f.make_member(study=study, role=StudyMember.Role.ANNOTATOR),
        "manager": f.make_user(),
        "annotator": f.make_user(),
        "removed": f.make_user(),
    }
    project = make_project(owner=owner, texts={}, annotators_per_text=8)
    annotation.documents_add_from_study(project=project, study=study, what="anonymized")
    for name in ("manager", "annotator", "removed"):
        role = "manager" if name == "manager" else "annotator"
        annotation.project_member_set(project=project, user=users[name], role=role)
    tasks = {
        name: annotation.task_next(
            annotator=annotation.annotator_for_user(project=project, user=users[name])
        ).pk
        for name in ("owner", "manager", "annotator", "removed")
    }
    annotation.task_submit(task=Task.objects.get(pk=tasks["manager"]))  # exports have a row
    ProjectMember.objects.filter(project=project, user=users["removed"]).delete()
    # The project's own jobs (suggestions) have no study: they belong to whoever started them.
    project_jobs = {
        status: f.make_job(
            created_by=users["manager"], kind=Job.Kind.ANNOTATION_SUGGESTIONS, status=status
        )
        for status in (Job.Status.QUEUED, Job.Status.FAILED)
    }
    crowd = annotation.annotator_enroll(project=project, prolific_pid="CROWDPIDSTUDYMATRIX")
    annotation.annotator_instructions_confirm(annotator=crowd)
    ids = {
        "slug": study.slug,
        "study": study.pk,
        "target": draft.description.target_id,
        "description": draft.description_id,
        "text": draft.pk,
        "participant": participant.pk,
        "judgment": judgment.pk,
        "familiarity": familiarity.pk,
        "job": job.pk,
        "running_job": running.pk,
        "run": run.pk,
        "guard_run": guard_run.pk,
        "guard_result": guard_result.pk,
        "editor_id": users["editor"].pk,
        "project": project.slug,
        "task": tasks["annotator"],
        "project_job": project_jobs[Job.Status.QUEUED].pk,
        "project_failed_job": project_jobs[Job.Status.FAILED].pk,
        "crowd_token": crowd.token,
        "crowd_task": annotation.task_next(annotator=crowd).pk,
    }
    world = World(ids=ids, users=users)
    for who in IDENTITIES:
        world.clients[who] = Client() if who in NOT_LOGGED_IN else f.logged_in(users[who])
    # The crowd annotator's browser carries her own crowd session into the researcher pages.
    world.clients["crowd"].get(reverse("annotation-crowd-home", args=[crowd.token]))
    return world


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    """Build the world once per module; each test's changes roll back to it."""
    previous = anonymization.set_anonymizer(FakeAnonymizer())
    with django_db_blocker.unblock():
        atomic = transaction.atomic()
        atomic.__enter__()
        try:
            yield _build()
        finally:
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)
            anonymization.set_anonymizer(previous)


@pytest.fixture(autouse=True)
def _no_job_dispatch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Allowed posts may queue jobs: record them, run nothing."""
    monkeypatch.setattr("intruder.services.jobs._dispatch", lambda job: None)


@dataclass(frozen=True)
class Row:
    """One endpoint: how to call it and who may."""

    method: str
    args: Callable[[dict], dict]
    allowed: set[str]
    api: bool = False
    member_refusal: int = 403  # a member whose role lacks the right (viewer, or editor)
    data: dict = field(default_factory=dict)


def slug(ids: dict) -> dict:
    return {"slug": ids["slug"]}


def none(ids: dict) -> dict:
    return {}


def study_pk(ids: dict) -> dict:
    return {"pk": ids["study"]}


def of(key: str, **extra: Any) -> Callable[[dict], dict]:
    return lambda ids: {"pk": ids[key], **extra}


def with_slug(**extra: Any) -> Callable[[dict], dict]:
    """The study's slug and more arguments; a value "@key" stands for the world's ids[key]."""
    return lambda ids: {
        "slug": ids["slug"],
        **{k: ids[v[1:]] if str(v).startswith("@") else v for k, v in extra.items()},
    }


ROWS: dict[str, Row] = {
    # Researcher pages: studies
    "researcher-studies": Row("get", none, RESEARCHERS),
    "researcher-progress": Row("get", none, RESEARCHERS),
    "researcher-study-create": Row("get", none, RESEARCHERS),
    "researcher-study": Row("get", slug, READERS),
    "researcher-participants": Row("get", slug, READERS),
    "researcher-flags": Row("get", slug, READERS),
    "researcher-exclusion-rules": Row("post", slug, EDITORS),
    "researcher-catch-trial": Row("post", slug, EDITORS),
    "researcher-flag-review": Row(
        "post", with_slug(kind="judgment", pk="@judgment"), EDITORS, data={"decision": "keep"}
    ),
    "researcher-manage": Row("get", slug, OWNERS),
    "researcher-clone": Row("post", slug, OWNERS),
    "researcher-archive": Row("post", slug, OWNERS),
    "researcher-member-add": Row("post", slug, OWNERS),
    "researcher-member-remove": Row("post", with_slug(user_id="@editor_id"), OWNERS),
    "researcher-study-edit": Row("get", slug, EDITORS),
    "researcher-study-import": Row("post", slug, EDITORS),
    "researcher-study-take": Row("post", slug, EDITORS),
    "researcher-study-anonymize": Row("post", slug, EDITORS),
    "researcher-study-anonymize-llm": Row("post", slug, EDITORS),
    "researcher-study-llm-intruder": Row("post", slug, EDITORS),
    "researcher-review": Row("get", slug, READERS),
    "researcher-review-text": Row("get", with_slug(pk="@text"), READERS),
    "researcher-release": Row("post", slug, EDITORS),
    "researcher-study-guard": Row("post", slug, EDITORS),
    "researcher-guard-undo": Row("post", slug, EDITORS),
    "researcher-study-rehearse": Row("post", slug, EDITORS),
    "researcher-study-guard-rows": Row("get", slug, READERS),
    "researcher-export": Row("get", with_slug(table="judgments", fmt="csv"), READERS),
    # Prolific
    "researcher-prolific": Row("get", slug, READERS),
    "researcher-prolific-draft": Row("post", slug, EDITORS),
    "researcher-prolific-transition": Row("post", slug, EDITORS),
    "researcher-prolific-sync": Row("post", slug, EDITORS),
    "researcher-prolific-review": Row("post", slug, EDITORS),
    "researcher-prolific-bonus": Row("post", slug, EDITORS),
    # The preview of a bulk rule is a read (viewers see who it selects); sending is a POST.
    "researcher-prolific-bulk": Row("get", with_slug(rule="approve-clean"), READERS),
    # Jobs
    "researcher-job-status": Row("get", of("job"), READERS),
    "researcher-job-retry": Row("post", of("job"), EDITORS),
    "researcher-job-cancel": Row("post", of("running_job"), EDITORS),
    # Analysis and risk
    "analysis-study": Row("get", slug, READERS),
    "analysis-construct-loss": Row("post", slug, EDITORS),
    "analysis-table": Row("get", with_slug(table="summary", fmt="json"), READERS),
    "risk-page": Row("get", slug, READERS),
    "risk-run-start": Row("post", slug, EDITORS, member_refusal=404),
    "risk-check-start": Row("post", slug, EDITORS, member_refusal=404),
    "risk-download": Row("get", with_slug(run_id="@run", name="summary.json"), READERS),
    # Queuing work on the workers is an editor's action, even a PDF a reader may download.
    "risk-pdf-start": Row("post", with_slug(run_id="@run"), EDITORS, member_refusal=404),
    # Preview
    "researcher-preview": Row("get", slug, READERS),
    "researcher-preview-step": Row("get", with_slug(step="instructions"), READERS),
    "researcher-preview-item": Row("get", with_slug(step="text", number=1), READERS),
    # REST API
    "api:token-obtain": Row("post", none, set(IDENTITIES), api=True),
    "api:schema": Row("get", none, RESEARCHERS, api=True),
    "api:docs": Row("get", none, RESEARCHERS, api=True),
    "api:redoc": Row("get", none, RESEARCHERS, api=True),
    "api:study-list": Row("get", none, RESEARCHERS, api=True),
    "api:study-create": Row("post", none, RESEARCHERS, api=True),
    "api:study-detail": Row("get", study_pk, READERS, api=True),
    "api:study-update": Row("patch", study_pk, EDITORS, api=True),
    "api:study-take": Row("post", study_pk, EDITORS, api=True),
    "api:study-anonymize-llm": Row("post", study_pk, EDITORS, api=True),
    "api:study-llm-intruder": Row("post", study_pk, EDITORS, api=True),
    "api:target-list": Row("get", none, RESEARCHERS, api=True),
    "api:target-detail": Row("get", of("target"), READERS, api=True),
    "api:description-list": Row("get", none, RESEARCHERS, api=True),
    "api:description-detail": Row("get", of("description"), READERS, api=True),
    "api:text-list": Row("get", none, RESEARCHERS, api=True),
    "api:text-detail": Row("get", of("text"), READERS, api=True),
    "api:text-spans": Row("put", of("text"), EDITORS, api=True),
    "api:text-status": Row("post", of("text"), EDITORS, api=True),
    "api:participant-list": Row("get", none, RESEARCHERS, api=True),
    "api:participant-detail": Row("get", of("participant"), READERS, api=True),
    "api:judgment-list": Row("get", none, RESEARCHERS, api=True),
    "api:judgment-detail": Row("get", of("judgment"), READERS, api=True),
    "api:familiarity-answer-list": Row("get", none, RESEARCHERS, api=True),
    "api:attack-run-list": Row("get", none, RESEARCHERS, api=True),
    "api:attack-run-create": Row("post", none, RESEARCHERS, api=True),
    "api:attack-run-detail": Row("get", of("run"), READERS, api=True),
    "api:attack-result-list": Row("get", none, RESEARCHERS, api=True),
    "api:guard-run-list": Row("get", none, RESEARCHERS, api=True),
    "api:guard-run-detail": Row("get", of("guard_run"), READERS, api=True),
    "api:guard-result-list": Row("get", none, RESEARCHERS, api=True),
    "api:job-list": Row("get", none, RESEARCHERS, api=True),
    "api:job-detail": Row("get", of("job"), READERS, api=True),
    "api:job-retry": Row("post", of("job"), EDITORS, api=True),
    "api:job-cancel": Row("post", of("running_job"), EDITORS, api=True),
    # Annotation rows the annotation matrix leaves out
    "annotation-project-create": Row("get", none, RESEARCHERS),
    "annotation-adjudicate": Row(
        "get",
        lambda ids: {"slug": ids["project"]},
        annotation_matrix.MANAGERS,
        member_refusal=404,  # a study role gives no right in the project
    ),
    "annotation-submit": Row(
        "post",
        lambda ids: {"slug": ids["project"], "pk": ids["task"]},
        {"annotator"},  # the task's own annotator only
        member_refusal=404,
    ),
    "annotation-crowd-entry": Row("get", lambda ids: {"slug": ids["project"]}, set(IDENTITIES)),
}

# What the annotation matrix covers (its page table and its tasks, crowd and cancel tests).
ANNOTATION_MATRIX = {page[1] for page in annotation_matrix.PAGES.values()} | {
    "annotation-api",
    "annotation-task",
    "annotation-crowd-home",
    "annotation-crowd-api",
    "annotation-crowd-start",
    "annotation-crowd-submit",
    "annotation-member-remove",  # owner-only, with every refusal: test_members_page.py
}


def url_names(resolver: URLResolver | None = None, namespace: str = "") -> set[str]:
    """Every named URL pattern of the project, namespaced like `reverse` wants it."""
    names: set[str] = set()
    for entry in (resolver or get_resolver()).url_patterns:
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            names |= url_names(entry, inner)
        elif isinstance(entry, URLPattern) and entry.name:
            names.add(namespace + entry.name)
    return names


def test_every_endpoint_has_an_expectation() -> None:
    covered = {name for name in url_names() if name.startswith(AREAS)}
    missing = covered - set(ROWS) - ANNOTATION_MATRIX
    assert not missing, f"endpoints without an access expectation: {sorted(missing)}"
    assert not set(ROWS) - covered, "rows for endpoints that no longer exist"


def expected(row: Row, who: str) -> int | str:
    """The refusal status for `who`, or "allowed"."""
    if who in row.allowed:
        return "allowed"
    if who in NOT_LOGGED_IN:
        return 401 if row.api else "login"
    if who in READERS:
        return row.member_refusal
    return 404


@pytest.mark.django_db
@pytest.mark.parametrize("who", IDENTITIES)
@pytest.mark.parametrize("name", sorted(ROWS))
def test_access_follows_the_matrix(world: World, name: str, who: str) -> None:
    row = ROWS[name]
    url = reverse(name, kwargs=row.args(world.ids))
    client = world.clients[who]
    if row.method in ("put", "patch") or row.api:
        response = getattr(client, row.method)(url, row.data, content_type="application/json")
    else:
        response = getattr(client, row.method)(url, row.data)
    status = response.status_code
    outcome = expected(row, who)
    login = status == 302 and "/accounts/login/" in response.get("Location", "")
    if outcome == "allowed":
        assert status < 500 and status not in (401, 403, 404) and not login, status
    elif outcome == "login":
        assert login, status
    else:
        assert status == outcome


STUDYLESS_JOB_ROWS = {
    "researcher-job-status": "project_job",
    "researcher-job-retry": "project_failed_job",
    "researcher-job-cancel": "project_job",
    "api:job-detail": "project_job",
    "api:job-retry": "project_failed_job",
    "api:job-cancel": "project_job",
}


@pytest.mark.django_db
@pytest.mark.parametrize("who", IDENTITIES)
@pytest.mark.parametrize("name", sorted(STUDYLESS_JOB_ROWS))
def test_a_study_less_job_is_its_starters_on_the_pages_as_in_the_api(
    world: World, name: str, who: str
) -> None:
    row = ROWS[name]
    url = reverse(name, kwargs={"pk": world.ids[STUDYLESS_JOB_ROWS[name]]})
    response = getattr(world.clients[who], row.method)(url)
    status = response.status_code
    login = status == 302 and "/accounts/login/" in response.get("Location", "")
    if who == "manager":  # she started the project's suggestions job
        assert status in (200, 302) and not login, status
    elif who in NOT_LOGGED_IN:
        assert status == 401 if row.api else login, status
    else:
        assert status == 404


LISTS = {
    "api:study-list": "study",
    "api:target-list": "target",
    "api:description-list": "description",
    "api:text-list": "text",
    "api:participant-list": "participant",
    "api:judgment-list": "judgment",
    "api:familiarity-answer-list": "familiarity",
    "api:attack-run-list": "run",
    "api:guard-run-list": "guard_run",
    "api:guard-result-list": "guard_result",
    "api:job-list": "job",
}


@pytest.mark.django_db
@pytest.mark.parametrize("who", sorted(RESEARCHERS))
@pytest.mark.parametrize("name", sorted(LISTS))
def test_api_lists_show_the_studys_rows_only_to_its_readers(
    world: World, name: str, who: str
) -> None:
    response = world.clients[who].get(reverse(name), {"page_size": 500})
    listed = {row["id"] for row in response.json()["results"]}
    assert (world.ids[LISTS[name]] in listed) == (who in READERS)


def annotation_gets(ids: dict) -> list[str]:
    """The annotation pages a project role opens on this study's texts."""
    project = ids["project"]
    return [
        reverse("annotation-projects"),
        reverse("annotation-project", args=[project]),
        reverse("annotation-work", args=[project]),
        reverse("annotation-task", args=[project, ids["task"]]),
        reverse("annotation-api", args=[ids["task"]]),
        reverse("annotation-agreement", args=[project]),
        reverse("annotation-evaluate", args=[project]),
        reverse("annotation-adjudicate", args=[project]),
        reverse("annotation-export", args=[project, "csv"]),
        reverse("annotation-export", args=[project, "tab"]),
        reverse("annotation-export", args=[project, "doccano"]),
        reverse("annotation-crowd-home", args=[ids["crowd_token"]]),
        reverse("annotation-crowd-api", args=[ids["crowd_token"], ids["crowd_task"]]),
    ]


@pytest.mark.django_db
@pytest.mark.parametrize("who", sorted(set(IDENTITIES) - READERS))
def test_no_target_name_reaches_anyone_without_a_study_role(world: World, who: str) -> None:
    """Whatever a project role, crowd annotator or stranger may open, no target name is in it."""
    names = list(TargetPerson.objects.filter(study_id=world.ids["study"]).values_list("name"))
    urls = [
        reverse(name, kwargs=row.args(world.ids))
        for name, row in sorted(ROWS.items())
        if row.method == "get"
    ] + annotation_gets(world.ids)
    for url in urls:
        response = world.clients[who].get(url)
        body = b"".join(response) if response.streaming else response.content
        for (name,) in names:
            assert name.encode() not in body, url


@pytest.mark.django_db
def test_the_target_name_check_would_see_a_leak(world: World) -> None:
    """The study's readers do see the names: the check above looks where names would be."""
    text = AnonymizedText.objects.select_related("description__target").get(pk=world.ids["text"])
    url = reverse("researcher-review-text", args=[world.ids["slug"], text.pk])
    for who in READERS:
        assert text.description.target.name.encode() in world.clients[who].get(url).content
