"""The project members page (issue 40): the owner adds and removes annotators without the admin.

The attackers: a manager who is not the owner, an annotator, another account, an anonymous
caller, a forged removal for a project one does not own.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from intruder.annotation import selectors, services
from intruder.annotation.models import ProjectMember
from tests.annotation.conftest import make_project
from tests.intruder.factories import logged_in, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(fake_anonymizer):
    return make_project(slug="members-test")


def _members_url(project) -> str:
    return reverse("annotation-members", kwargs={"slug": project.slug})


def _remove_url(project, user) -> str:
    return reverse("annotation-member-remove", kwargs={"slug": project.slug, "user_id": user.pk})


def test_the_owner_adds_an_annotator_who_can_then_annotate(project) -> None:
    ana = make_user(username="ana")
    assert selectors.project_role(project=project, user=ana) is None
    answer = logged_in(project.owner).post(
        _members_url(project), {"username": " ana ", "role": "annotator"}, follow=True
    )
    assert answer.status_code == 200
    assert "ana is now annotator of this project." in answer.content.decode()
    assert selectors.project_role(project=project, user=ana) == ProjectMember.Role.ANNOTATOR
    work = logged_in(ana).get(reverse("annotation-work", kwargs={"slug": project.slug}))
    assert work.status_code == 302 and "/task/" in work["Location"]


def test_the_owner_promotes_then_removes_a_member(project) -> None:
    ana = make_user(username="ana")
    owner = logged_in(project.owner)
    owner.post(_members_url(project), {"username": "ana", "role": "annotator"})
    owner.post(_members_url(project), {"username": "ana", "role": "manager"})
    assert project.members.get(user=ana).role == ProjectMember.Role.MANAGER
    page = owner.get(_members_url(project)).content.decode()
    assert "Manager" in page and "Remove ana" in page
    assert owner.post(_remove_url(project, ana)).status_code == 302
    assert selectors.project_role(project=project, user=ana) is None
    assert logged_in(ana).get(_members_url(project)).status_code == 404


def test_an_unknown_account_or_the_owner_is_refused_with_a_reason(project) -> None:
    owner = logged_in(project.owner)
    unknown = owner.post(_members_url(project), {"username": "nobody", "role": "annotator"})
    assert unknown.status_code == 400
    assert "No account is called “nobody”." in unknown.content.decode()
    itself = owner.post(
        _members_url(project), {"username": project.owner.username, "role": "annotator"}
    )
    assert itself.status_code == 400
    assert "The owner manages the project already." in itself.content.decode()
    bad_role = owner.post(_members_url(project), {"username": "x", "role": "owner"})
    assert bad_role.status_code == 400
    assert not project.members.exists()


def test_a_manager_sees_the_members_but_cannot_change_them(project) -> None:
    manager, ana = make_user(), make_user(username="ana")
    services.project_member_set(project=project, user=manager, role="manager")
    services.project_member_set(project=project, user=ana, role="annotator")
    client = logged_in(manager)
    page = client.get(_members_url(project))
    assert page.status_code == 200
    assert "Only the owner adds or removes members." in page.content.decode()
    assert "Save role" not in page.content.decode()
    assert (
        client.post(_members_url(project), {"username": "ana", "role": "manager"}).status_code
        == 403
    )
    assert client.post(_remove_url(project, ana)).status_code == 403
    assert project.members.get(user=ana).role == ProjectMember.Role.ANNOTATOR


def test_annotators_strangers_and_anonymous_callers_get_nothing(project) -> None:
    ana, stranger = make_user(), make_user()
    services.project_member_set(project=project, user=ana, role="annotator")
    for user in (ana, stranger):
        client = logged_in(user)
        assert client.get(_members_url(project)).status_code == 404
        assert (
            client.post(
                _members_url(project), {"username": user.username, "role": "manager"}
            ).status_code
            == 404
        )
        assert client.post(_remove_url(project, ana)).status_code == 404
    anonymous = logged_in(stranger)
    anonymous.logout()
    answer = anonymous.post(
        _members_url(project), {"username": stranger.username, "role": "manager"}
    )
    assert answer.status_code == 302 and "/accounts/login/" in answer["Location"]
    assert list(project.members.values_list("user__username", "role")) == [
        (ana.username, "annotator")
    ]


def test_the_owner_of_another_project_cannot_remove_members_here(project) -> None:
    ana = make_user()
    services.project_member_set(project=project, user=ana, role="annotator")
    other = make_project(slug="elsewhere")
    assert logged_in(other.owner).post(_remove_url(project, ana)).status_code == 404
    assert project.members.filter(user=ana).exists()


def test_removing_a_member_keeps_her_submitted_annotations(project) -> None:
    ana = make_user()
    services.project_member_set(project=project, user=ana, role="annotator")
    annotator = services.annotator_for_user(project=project, user=ana)
    task = services.task_next(annotator=annotator)
    services.task_submit(task=task)
    logged_in(project.owner).post(_remove_url(project, ana))
    task.refresh_from_db()
    assert task.status == task.Status.SUBMITTED
    assert selectors.project_role(project=project, user=ana) is None
