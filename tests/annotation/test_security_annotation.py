"""Crowd annotators never receive other annotators' work, other texts or researchers' data.

Like tests/intruder/test_security_participant.py: walk the whole crowd flow with the test
client, keep every response (bodies, headers, redirects, API JSON) and search all of it.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse

from intruder.annotation import services
from intruder.annotation.models import Task
from tests.annotation.conftest import make_project
from tests.intruder.factories import make_user

pytestmark = pytest.mark.django_db

XSS = '<script>alert("x")</script>'
TEXTS = {
    "t1": f"Quillonmere Fastbrook lives in Yarrowdeep and writes {XSS} on walls.",
    "t2": "Brisvane Holloway sailed from Ostmarrow with Keldrith the cook.",
    "t3": "Thessaly Marchbank opened Wintervale Bakery near Drosselford.",
}
# Every text but the one our annotator gets holds words only that text has.
OTHER_WORDS = {
    "t1": ["Quillonmere", "Yarrowdeep"],
    "t2": ["Brisvane", "Ostmarrow", "Keldrith"],
    "t3": ["Thessaly", "Wintervale", "Drosselford"],
}


class Recorder:
    def __init__(self) -> None:
        self.client = Client()
        self.responses = []

    def keep(self, response):
        self.responses.append(response)
        return response

    def get(self, url, **kw):
        return self.keep(self.client.get(url, **kw))

    def post(self, url, data=None):
        return self.keep(self.client.post(url, data or {}))

    def put(self, url, payload):
        return self.keep(self.client.put(url, json.dumps(payload), content_type="application/json"))

    def everything(self) -> str:
        parts = []
        for response in self.responses:
            parts.append(response.content.decode())
            parts.extend(f"{k}: {v}" for k, v in response.headers.items())
        return "\n".join(parts).lower()


def test_crowd_annotator_sees_only_their_own_text_and_work(fake_anonymizer):
    owner = make_user(username="secretresearcherzz")
    project = make_project(owner=owner, texts=TEXTS, annotators_per_text=2, texts_per_annotator=1)
    # Another crowd annotator has submitted work on every text, with a telling entity key.
    other = services.annotator_enroll(project=project, prolific_pid="OTHERPIDQ7X2")
    for document in project.documents.all():
        task = Task.objects.create(document=document, annotator=other, slot=1)
        first = document.text.split()[0]
        services.task_save(
            task=task,
            revision=0,
            mentions=[
                {
                    "start": 0,
                    "end": len(first),
                    "entity_type": "PERSON_FIRSTNAME",
                    "identifier_type": "DIRECT",
                    "entity": "otherentitykeyzz",
                }
            ],
        )
        services.task_submit(task=task)

    walker = Recorder()
    entry = reverse("annotation-crowd-entry", kwargs={"slug": project.slug})
    home = walker.get(f"{entry}?PROLIFIC_PID=MYPID123&STUDY_ID=S&SESSION_ID=X")["Location"]
    walker.get(home)
    token = home.rstrip("/").split("/")[-1]
    walker.post(reverse("annotation-crowd-start", kwargs={"token": token}))
    page = walker.get(home)
    task_id = page.context["task"].pk
    mine = page.context["task"].document.doc_id
    api = reverse("annotation-crowd-api", kwargs={"token": token, "pk": task_id})
    state = walker.get(api).json()
    walker.put(api, {"revision": state["task"]["revision"], "mentions": []})
    walker.put(api, {"revision": 0, "mentions": []})  # a stale save: the 409 body too
    # Guessing other tasks' ids reveals nothing.
    for pk in Task.objects.exclude(pk=task_id).values_list("pk", flat=True):
        assert (
            walker.get(
                reverse("annotation-crowd-api", kwargs={"token": token, "pk": pk})
            ).status_code
            == 404
        )
    walker.post(reverse("annotation-crowd-submit", kwargs={"token": token}), {"task": str(task_id)})
    done = walker.get(home)
    assert project.completion_code in done.content.decode()

    seen = walker.everything()
    forbidden = ["otherpidq7x2", "secretresearcherzz", "otherentitykeyzz"]
    forbidden += [w.lower() for doc, words in OTHER_WORDS.items() if doc != mine for w in words]
    assert [f for f in forbidden if f in seen] == []
    assert "<script>alert" not in "".join(
        r.content.decode() for r in walker.responses if r["Content-Type"].startswith("text/html")
    )


def test_crowd_pages_of_an_unknown_token_are_404():
    client = Client()
    assert client.get(reverse("annotation-crowd-home", kwargs={"token": "nope"})).status_code == 404
    assert (
        client.post(reverse("annotation-crowd-submit", kwargs={"token": "nope"})).status_code == 404
    )


def test_a_researchers_own_seat_token_does_not_open_crowd_pages(fake_anonymizer):
    project = make_project()
    seat = services.annotator_for_user(project=project, user=project.owner)
    assert (
        Client().get(reverse("annotation-crowd-home", kwargs={"token": seat.token})).status_code
        == 404
    )


def test_bad_prolific_ids_are_refused_with_a_page_not_an_error(fake_anonymizer):
    project = make_project()
    entry = reverse("annotation-crowd-entry", kwargs={"slug": project.slug})
    for query in ("", "?PROLIFIC_PID=", "?PROLIFIC_PID=%3Cscript%3E"):
        assert Client().get(entry + query).status_code == 400


def test_no_original_target_name_or_alias_reaches_a_crowd_annotator_of_a_linked_project(
    fake_anonymizer,
):
    """Issue 22: a project holding a study's originals, beside its open intruder study.

    Walk every crowd page and API a made-up PID can reach (entry with and without the right
    Prolific study ID, home, start, submit, the tasks API of every task id) while the linked
    intruder study is open, and search everything for the originals, names and aliases.
    """
    from intruder.annotation.models import Project
    from intruder.models import Study
    from tests.intruder.factories import make_description, make_study, make_target

    writers = make_study(kind="collection", is_open=False)
    intruders = make_study(owner=writers.owner, is_open=False)
    secrets = []
    for n, (name, alias) in enumerate([("Wrenfield Ashcombe", "Wren"), ("Osric Vellamy", "Ozzy")]):
        target = make_target(study=writers, name=name, aliases=[alias])
        text = f"{name}, called {alias} by friends, restores clocks in Tarnwick {n}."
        make_description(study=writers, target=target, text=text)
        make_target(study=intruders, name=name, key=f"i{n}", aliases=[alias])
        secrets += [name.lower(), alias.lower(), text.lower(), f"tarnwick {n}"]
    project = make_project(owner=writers.owner, texts={}, is_open=False)
    services.documents_add_from_study(project=project, study=writers, what="descriptions")
    # An annotator enrolled while only the project was open, then the study opened.
    services.project_open_set(project=project, is_open=True)
    early = services.annotator_enroll(project=project, prolific_pid="EARLYCROWD1")
    Project.objects.filter(pk=project.pk).update(is_open=True)
    Study.objects.filter(pk=intruders.pk).update(is_open=True)
    walker = Recorder()
    entry = reverse("annotation-crowd-entry", kwargs={"slug": project.slug})
    for pid in ("MADEUPCROWD1", "MADEUPCROWD2", "EARLYCROWD1"):
        walker.get(f"{entry}?PROLIFIC_PID={pid}&STUDY_ID=x&SESSION_ID=s")
    walker.post(reverse("annotation-crowd-start", kwargs={"token": early.token}))
    walker.get(reverse("annotation-crowd-home", kwargs={"token": early.token}))
    walker.post(reverse("annotation-crowd-submit", kwargs={"token": early.token}), {"task": "1"})
    for task in Task.objects.all():
        walker.get(reverse("annotation-crowd-api", kwargs={"token": early.token, "pk": task.pk}))
    seen = walker.everything()
    assert not Project.objects.get(pk=project.pk).annotators.exclude(pk=early.pk).exists()
    for secret in secrets:
        assert secret not in seen, secret
