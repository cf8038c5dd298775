"""gunicorn settings for a real deployment: `gunicorn -c gunicorn.conf.py intruder.wsgi`.

Every value can be overridden by an environment variable (GUNICORN_*), so one file serves a
laptop, a VM and a container. Static files are served by whitenoise from STATIC_ROOT
(`python manage.py collectstatic --noinput` first).
"""

import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")

# Synchronous workers with a few threads each: requests are short and database-bound, and
# threads let one worker overlap database waits without the memory of extra processes.
# (2 x cores) + 1 is gunicorn's rule of thumb for processes.
workers = int(os.environ.get("GUNICORN_WORKERS", multiprocessing.cpu_count() * 2 + 1))
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
worker_class = "gthread" if threads > 1 else "sync"

# A participant page never takes seconds; anything slower is a stuck worker to replace.
# Long jobs (anonymization, TRIA) run in the background worker, never in a request.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "30"))
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "5"))

# Recycle workers now and then so slow leaks never accumulate; jitter avoids all at once.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "2000"))
max_requests_jitter = int(os.environ.get("GUNICORN_MAX_REQUESTS_JITTER", "200"))

# Load the app before forking: workers share its memory (intruder/wsgi.py imports every view
# and freezes the start-up heap, intruder/web/heap.py) and a broken app fails at start.
preload_app = os.environ.get("GUNICORN_PRELOAD", "1") == "1"

# An empty GUNICORN_ACCESSLOG turns the access log off (benchmarks).
accesslog = os.environ.get("GUNICORN_ACCESSLOG", "-") or None
errorlog = os.environ.get("GUNICORN_ERRORLOG", "-")
# Participant tokens (/p/<token>/) and Prolific IDs never reach the access log.
logger_class = "intruder.log_redaction.RedactingGunicornLogger"
loglevel = os.environ.get("GUNICORN_LOGLEVEL", "info")
# Behind a reverse proxy (nginx, a load balancer) that sets X-Forwarded-*.
forwarded_allow_ips = os.environ.get("GUNICORN_FORWARDED_ALLOW_IPS", "127.0.0.1")
