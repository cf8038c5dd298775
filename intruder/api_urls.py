"""The REST API's URL map: the platform's endpoints and risk's (attack and guard runs), in one
namespace, "api". Composed here so that neither package imports the other."""

from intruder.api.urls import urlpatterns as platform_urls
from intruder.risk.api_urls import urlpatterns as risk_urls

app_name = "api"

urlpatterns = [*platform_urls, *risk_urls]
