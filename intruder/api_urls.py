"""The REST API's URL map: the platform's endpoints, risk's (attack and guard runs) and the
LLM jobs', in one namespace, "api". Composed here so that no package imports another's."""

from intruder.api.urls import urlpatterns as platform_urls
from intruder.llm_intruder.api_urls import urlpatterns as llm_urls
from intruder.risk.api_urls import urlpatterns as risk_urls

app_name = "api"

urlpatterns = [*platform_urls, *llm_urls, *risk_urls]
