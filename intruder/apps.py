from django.apps import AppConfig


class IntruderConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "intruder"
    verbose_name = "Motivated-intruder studies"

    def ready(self) -> None:
        # Imported for what they register: the system checks, the job runners, the report
        # pages and the rows a study's data version digests (the annotation app registers
        # its own), and the LLM guesses' rescoring.
        from intruder import checks, tasks  # noqa: F401
        from intruder.analysis import page  # noqa: F401
        from intruder.evidence import reports  # noqa: F401
        from intruder.llm_intruder import scoring  # noqa: F401
        from intruder.log_redaction import install_request_log_redaction
        from intruder.risk import pages  # noqa: F401
        from intruder.risk.researcher_parts import register_researcher_parts

        install_request_log_redaction()
        register_researcher_parts()
