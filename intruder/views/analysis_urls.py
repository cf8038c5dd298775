"""Analysis URLs (mounted at /r/, beside the researcher pages)."""

from django.urls import path

from intruder.views import analysis

urlpatterns = [
    path("<slug:slug>/analysis/", analysis.study_analysis, name="analysis-study"),
    path(
        "<slug:slug>/analysis/construct-loss/",
        analysis.construct_loss_start,
        name="analysis-construct-loss",
    ),
    path(
        "<slug:slug>/analysis/<str:table>.<str:fmt>",
        analysis.analysis_table,
        name="analysis-table",
    ),
]
