"""Risk's URLs (mounted at /r/, beside the researcher pages): the risk report and the
guard (whose panel is on the review page, hence its address)."""

from django.urls import path

from intruder.risk import guard_views, views

urlpatterns = [
    path("<slug:slug>/risk/", views.risk_page, name="risk-page"),
    path("<slug:slug>/risk/runs/", views.risk_run_start, name="risk-run-start"),
    path("<slug:slug>/risk/check/", views.risk_check_start, name="risk-check-start"),
    path("<slug:slug>/risk/<int:run_id>/pdf/", views.risk_pdf_start, name="risk-pdf-start"),
    path("<slug:slug>/risk/<int:run_id>/<str:name>", views.risk_download, name="risk-download"),
    path("<slug:slug>/review/guard/", guard_views.study_guard, name="researcher-study-guard"),
    path(
        "<slug:slug>/review/guard/undo/", guard_views.study_guard_undo, name="researcher-guard-undo"
    ),
    path(
        "<slug:slug>/review/guard/rows.json",
        guard_views.study_guard_rows,
        name="researcher-study-guard-rows",
    ),
]
