from django.urls import path

from intruder.prolific import views

urlpatterns = [path("prolific/webhook/", views.webhook, name="prolific-webhook")]
