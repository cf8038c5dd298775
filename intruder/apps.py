from django.apps import AppConfig


class IntruderConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "intruder"
    verbose_name = "Motivated-intruder studies"

    def import_models(self) -> None:
        """Import the core's tables (`intruder/models.py`) and every package's own
        (`<package>/models.py`), so that Django registers them all with this app (same app
        label and tables). The one place that names them: the core's models import no package.
        """
        super().import_models()
        from intruder.evidence import models as evidence  # noqa: F401
        from intruder.llm_intruder import models as llm_intruder  # noqa: F401
        from intruder.prolific import models as prolific  # noqa: F401
        from intruder.reports import models as reports  # noqa: F401
        from intruder.risk import models as risk  # noqa: F401

    def ready(self) -> None:
        # Imported for what they register: the system checks, the job runners, the report
        # pages and the rows a study's data version digests (the annotation app registers
        # its own), the researcher pages' parts and the LLM guesses' rescoring.
        from intruder import checks, tasks  # noqa: F401
        from intruder.analysis import page  # noqa: F401
        from intruder.evidence.selectors import study_attention_checks
        from intruder.llm_intruder import researcher_parts as llm_parts
        from intruder.llm_intruder import scoring  # noqa: F401
        from intruder.log_redaction import install_request_log_redaction
        from intruder.rehearsal import researcher_parts as rehearsal_parts
        from intruder.reports.registry import register_study_rows
        from intruder.risk import pages  # noqa: F401
        from intruder.risk import researcher_parts as risk_parts

        install_request_log_redaction()
        # The study page shows them in this order: the rehearsal's card, then risk's.
        for parts in (rehearsal_parts, risk_parts, llm_parts):
            parts.register_researcher_parts()
        register_study_rows("attention", study_attention_checks)
