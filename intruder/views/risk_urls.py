"""Risk report URLs (mounted at /r/, beside the researcher pages)."""

from django.urls import path

from intruder.views import risk

urlpatterns = [
    path("<slug:slug>/risk/", risk.risk_page, name="risk-page"),
    path("<slug:slug>/risk/runs/", risk.risk_run_start, name="risk-run-start"),
    path("<slug:slug>/risk/check/", risk.risk_check_start, name="risk-check-start"),
    path("<slug:slug>/risk/<int:run_id>/pdf/", risk.risk_pdf_start, name="risk-pdf-start"),
    path("<slug:slug>/risk/<int:run_id>/<str:name>", risk.risk_download, name="risk-download"),
]
