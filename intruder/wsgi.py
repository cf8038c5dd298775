import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "intruder.settings")
application = get_wsgi_application()

from intruder.checks import refuse_unsafe_start  # noqa: E402 - needs the configured settings
from intruder.web.heap import freeze_startup_heap  # noqa: E402 - needs the configured settings

refuse_unsafe_start()
# Under gunicorn's preload this runs in the master, before it forks the workers.
freeze_startup_heap()
