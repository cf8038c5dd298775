from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "intruder.annotation"
    label = "annotation"
    verbose_name = "PSI annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported for what they register: the agreement page with the report store, and
        # the projects linked to studies with enrolment.
        from intruder.annotation import linked, pages  # noqa: F401
