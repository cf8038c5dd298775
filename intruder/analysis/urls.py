"""Analysis URLs (mounted at /r/, beside the researcher pages)."""

from django.urls import include, path

from intruder.analysis import views as analysis

study_urls = [
    path("", analysis.study_analysis, name="analysis-study"),
    path("construct-loss/", analysis.construct_loss_start, name="analysis-construct-loss"),
    path("<str:table>.<str:fmt>", analysis.analysis_table, name="analysis-table"),
]

urlpatterns = [path("<slug:slug>/analysis/", include(study_urls))]
