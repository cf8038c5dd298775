"""The site of a served rehearsal, for gunicorn: the platform's WSGI application on the
rehearsal's clock (`clock.CLOCK_ENV`), installed before gunicorn forks its workers."""

from intruder.rehearsal.clock import clock_from_environment
from intruder.wsgi import application

clock_from_environment()

__all__ = ["application"]
