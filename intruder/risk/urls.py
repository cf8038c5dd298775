"""Risk report URLs (mounted at /r/, beside the researcher pages)."""

from django.urls import path

from intruder.risk import views

urlpatterns = [
    path("<slug:slug>/risk/", views.risk_page, name="risk-page"),
    path("<slug:slug>/risk/runs/", views.risk_run_start, name="risk-run-start"),
    path("<slug:slug>/risk/check/", views.risk_check_start, name="risk-check-start"),
    path("<slug:slug>/risk/<int:run_id>/pdf/", views.risk_pdf_start, name="risk-pdf-start"),
    path("<slug:slug>/risk/<int:run_id>/<str:name>", views.risk_download, name="risk-download"),
]
