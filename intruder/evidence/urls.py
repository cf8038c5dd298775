"""Answer evidence's researcher pages (mounted at /r/, beside the researcher pages): the
flagged answers, the exclusion rules and the catch trials of a study."""

from django.urls import include, path

from intruder.evidence import views

study_urls = [
    path("", views.flags_page, name="researcher-flags"),
    path("rules/", views.exclusion_rules_save, name="researcher-exclusion-rules"),
    path("catch/", views.catch_trial_save, name="researcher-catch-trial"),
    path("<str:kind>/<id:pk>/", views.flag_review, name="researcher-flag-review"),
]

urlpatterns = [path("<slug:slug>/flags/", include(study_urls))]
