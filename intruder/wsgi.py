import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "intruder.settings")
application = get_wsgi_application()

from intruder.checks import refuse_unsafe_start  # noqa: E402 - needs the configured settings

refuse_unsafe_start()
