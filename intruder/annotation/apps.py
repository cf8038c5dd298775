from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "intruder.annotation"
    label = "annotation"
    verbose_name = "PSI annotation"
    default_auto_field = "django.db.models.BigAutoField"
