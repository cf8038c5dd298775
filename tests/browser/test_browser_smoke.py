"""Smoke test of the browser harness against a page that always exists: the admin login."""

import pytest
from django.contrib.auth import get_user_model

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_staff_user_logs_into_admin_through_the_real_login_form(page) -> None:
    get_user_model().objects.create_superuser("ada", "ada@example.org", "correct horse 42")

    page.goto("/admin/login/")
    page.fill("input[name=username]", "ada")
    page.fill("input[name=password]", "correct horse 42")
    page.click("input[type=submit]")

    page.wait_for_url("**/admin/")
    assert "Site administration" in page.content()


def test_admin_login_rejects_a_wrong_password_and_stays_on_the_form(page) -> None:
    get_user_model().objects.create_superuser("ada", "ada@example.org", "correct horse 42")

    page.goto("/admin/login/")
    page.fill("input[name=username]", "ada")
    page.fill("input[name=password]", "wrong")
    page.click("input[type=submit]")

    page.wait_for_selector(".errornote")
    assert "/admin/login/" in page.url
