"""Keep participant tokens out of logs: access logs and Django's request warnings.

A participant's token in /p/<token>/ (or a crowd annotator's in /a/p/<token>/) is their
whole session: whoever reads it from a log can act as them. Prolific IDs in entry links are
personal data. Both are replaced before a line is written; the path stays readable.
"""

from __future__ import annotations

import logging
import re
from typing import Any

TOKEN_PATH = re.compile(r"(/(?:a/)?p/)[^/?#\s]+")
PROLIFIC_QUERY = re.compile(r"((?:PROLIFIC_PID|SESSION_ID)=)[^&\s\"]*")
REDACTED = "[redacted]"


def redact(text: str) -> str:
    """Return `text` with participant tokens and Prolific IDs in URLs replaced."""
    return PROLIFIC_QUERY.sub(rf"\1{REDACTED}", TOKEN_PATH.sub(rf"\1{REDACTED}", text))


class RedactTokensFilter(logging.Filter):
    """Logging filter: format the record's message once, then redact it."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = redact(message)
        if redacted != message:
            record.msg, record.args = redacted, ()
        return True


class RedactingFormatter(logging.Formatter):
    """Formatter that redacts the whole entry, traceback included (a frame's locals or an
    exception message can carry the request path)."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


try:  # gunicorn is the production server; the class exists only where it is installed.
    from gunicorn.glogging import Logger as _GunicornLogger
except ImportError:  # pragma: no cover
    _GunicornLogger = None

if _GunicornLogger is not None:

    class RedactingGunicornLogger(_GunicornLogger):
        """gunicorn's logger whose access log atoms (request line, path, query) are redacted."""

        def atoms(self, resp: Any, req: Any, environ: dict, request_time: Any) -> dict:
            atoms = super().atoms(resp, req, environ, request_time)
            # Every atom: the request line, path, query, referer and each {environ}e.
            return {k: redact(v) if isinstance(v, str) else v for k, v in atoms.items()}


REQUEST_LOGGERS = ("django.request", "django.server")


def install_request_log_redaction() -> None:
    """Redact Django's request warnings ("Not Found: /p/<token>/") and runserver's lines."""
    for name in REQUEST_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactTokensFilter) for f in logger.filters):
            logger.addFilter(RedactTokensFilter())
