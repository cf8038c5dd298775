from django.apps import AppConfig


class IntruderConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "intruder"
    verbose_name = "Motivated-intruder studies"

    def ready(self) -> None:
        from intruder import checks  # noqa: F401 - registers the system checks
        from intruder.log_redaction import install_request_log_redaction

        install_request_log_redaction()
