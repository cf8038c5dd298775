"""Risk's REST API URLs (attack and guard runs, their results), mounted under /api/ in the
API's namespace beside `intruder.api.urls` (see `intruder.urls`)."""

from django.urls import path

from intruder.risk.apis import (
    AttackResultListApi,
    AttackRunCreateApi,
    AttackRunDetailApi,
    AttackRunListApi,
    GuardResultListApi,
    GuardRunDetailApi,
    GuardRunListApi,
)

urlpatterns = [
    path("attack-runs/", AttackRunListApi.as_view(), name="attack-run-list"),
    path("attack-runs/create/", AttackRunCreateApi.as_view(), name="attack-run-create"),
    path("attack-runs/<id:pk>/", AttackRunDetailApi.as_view(), name="attack-run-detail"),
    path("attack-results/", AttackResultListApi.as_view(), name="attack-result-list"),
    path("guard-runs/", GuardRunListApi.as_view(), name="guard-run-list"),
    path("guard-runs/<id:pk>/", GuardRunDetailApi.as_view(), name="guard-run-detail"),
    path("guard-results/", GuardResultListApi.as_view(), name="guard-result-list"),
]
