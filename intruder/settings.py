"""Settings for the intruder platform.

Embedded default: SQLite in ./var. Beyond one machine: set DATABASE_URL (PostgreSQL).
"""

import os
from pathlib import Path

import dj_database_url
from csp.constants import NONCE, NONE, SELF, UNSAFE_INLINE

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("INTRUDER_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def _env_bool(name: str, default: bool = False) -> bool:
    return os.environ.get(name, "1" if default else "0").strip().lower() in ("1", "true", "yes")


def _env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


# Public, so never a secret: `manage.py` commands and the WSGI app refuse to start with it
# when DEBUG is off (intruder.checks). scripts/demo.sh makes a random key in var/.
INSECURE_DEFAULT_SECRET_KEY = "dev-only-insecure-key-change-me"
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", INSECURE_DEFAULT_SECRET_KEY)
DEBUG = _env_bool("DJANGO_DEBUG")
ALLOWED_HOSTS = _env_list("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
# The demo (scripts/demo.sh sets INTRUDER_DEMO=1): the well-known demo password logs in and
# the two demo studies over the same persons may be open together. Never in production.
INTRUDER_DEMO = _env_bool("INTRUDER_DEMO")

# HTTPS behind a TLS-terminating proxy (docs/operations.md). Off by default so that the
# embedded default runs on plain http://127.0.0.1; a production deployment sets them all.
SECURE_SSL_REDIRECT = _env_bool("DJANGO_SECURE_SSL_REDIRECT")
SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_SECURE_HSTS_SECONDS", "0"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = _env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS")
SECURE_HSTS_PRELOAD = _env_bool("DJANGO_SECURE_HSTS_PRELOAD")
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = _env_bool("DJANGO_SECURE_COOKIES")
# "HTTP_X_FORWARDED_PROTO" (the header's value "https" means a secure request), or
# "HEADER,value". Only set it when the proxy always sets or strips that header.
_proxy_ssl_header = os.environ.get("DJANGO_SECURE_PROXY_SSL_HEADER", "").strip()
SECURE_PROXY_SSL_HEADER = (
    tuple([*_proxy_ssl_header.split(","), "https"][:2]) if _proxy_ssl_header else None
)
CSRF_TRUSTED_ORIGINS = _env_list("DJANGO_CSRF_TRUSTED_ORIGINS")
SECURE_REFERRER_POLICY = "same-origin"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI and Redoc as static files: the docs work offline
    "axes",
    "intruder",
    "intruder.annotation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its 429 answer.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "intruder.urls"
WSGI_APPLICATION = "intruder.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # Templates live beside their code, by one rule: the core's in intruder/templates/
        # (first, so that its pages win over the apps', drf_spectacular's), each package's in
        # intruder/<package>/templates/<package>/.
        "DIRS": [
            Path(__file__).resolve().parent / "templates",
            *sorted(Path(__file__).resolve().parent.glob("*/templates")),
        ],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Persistent connections (reused across requests of a worker thread) with a health check
# before reuse, so a database restart costs one failed ping, not a failed request.
DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("DJANGO_CONN_MAX_AGE", "600")),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Write-ahead logging lets participants read while an import or a job writes; a write
    # waits up to 20 s for the lock instead of failing with "database is locked"; and
    # BEGIN IMMEDIATE takes the write lock when a transaction starts, because SQLite cannot
    # upgrade a read lock while another connection writes (that fails at once, whatever the
    # timeout).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        transaction_mode="IMMEDIATE",
        timeout=float(os.environ.get("DJANGO_SQLITE_TIMEOUT", "20")),
    )
if DATABASES["default"]["ENGINE"].endswith("postgresql") and (
    os.environ.get("DJANGO_DB_PREPARED_STATEMENTS", "1") == "1"
):
    # Server-side parameter binding, and statements prepared after their 5th use on a
    # connection: the participant pages repeat a few queries whose planning otherwise costs
    # PostgreSQL more CPU than running them. Set DJANGO_DB_PREPARED_STATEMENTS=0 behind a
    # pooler that cannot carry prepared statements (PgBouncer < 1.21 in transaction mode).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        server_side_binding=True, prepare_threshold=5
    )

# django-axes watches every password login (login page, admin, API token) and locks a
# username from one client address after AXES_FAILURE_LIMIT failures, for
# AXES_COOLOFF_TIME hours; a successful login resets the count.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "intruder.auth.PasswordBackend",
]
AXES_FAILURE_LIMIT = int(os.environ.get("INTRUDER_LOGIN_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = float(os.environ.get("INTRUDER_LOGIN_COOLOFF_HOURS", "0.25"))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "intruder.throttles.client_ip"
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"

# Rate limits per client address (intruder.throttles). Behind N proxies that append to
# X-Forwarded-For, set INTRUDER_NUM_PROXIES=N so the limits see clients, not the proxy.
INTRUDER_NUM_PROXIES = int(os.environ.get("INTRUDER_NUM_PROXIES", "0"))
INTRUDER_ENROLMENT_RATE = os.environ.get("INTRUDER_ENROLMENT_RATE", "20/hour") or None
INTRUDER_TOKEN_RATE = os.environ.get("INTRUDER_TOKEN_RATE", "10/minute") or None
# First texts held this long by someone who has judged nothing are given back early when
# another participant needs a slot (at most the study's time limit).
INTRUDER_IDLE_RELEASE_MINUTES = float(os.environ.get("INTRUDER_IDLE_RELEASE_MINUTES", "10"))
# Prolific (intruder.prolific). Without a token the platform works as before: the entry link
# is pasted into Prolific by hand. The token never leaves the server (no page, export or log).
PROLIFIC_API_TOKEN = os.environ.get("PROLIFIC_API_TOKEN", "")
PROLIFIC_API_URL = os.environ.get("PROLIFIC_API_URL", "https://api.prolific.com/api/v1/")
PROLIFIC_TIMEOUT_SECONDS = float(os.environ.get("PROLIFIC_TIMEOUT_SECONDS", "10"))
PROLIFIC_WORKSPACE_ID = os.environ.get("PROLIFIC_WORKSPACE_ID", "")
# The workspace's currency (rewards are sent in its minor unit, bonuses in its major unit).
PROLIFIC_CURRENCY = os.environ.get("PROLIFIC_CURRENCY", "GBP")
# The workspace's webhook secret (POST /hooks/secrets/): deliveries not signed with it get 403.
PROLIFIC_WEBHOOK_SECRET = os.environ.get("PROLIFIC_WEBHOOK_SECRET", "")
# Deliveries whose X-Prolific-Request-Timestamp is further than this from our clock are
# refused (replay protection).
PROLIFIC_WEBHOOK_MAX_SKEW_SECONDS = int(os.environ.get("PROLIFIC_WEBHOOK_MAX_SKEW_SECONDS", "300"))
# Largest import file accepted on the researcher pages.
INTRUDER_IMPORT_MAX_MB = float(os.environ.get("INTRUDER_IMPORT_MAX_MB", "64"))
# Background documents of an attack run live in one database row and go to a job.
INTRUDER_BACKGROUND_MAX_MB = float(os.environ.get("INTRUDER_BACKGROUND_MAX_MB", "10"))

# Counters of the rate limits, and copies of the computed report pages. The default is per
# process; with several gunicorn workers or hosts point DJANGO_CACHE_URL at Redis
# (redis://host:6379/1) so they share one count, and Redis becomes the report pages' store
# (else the database; `intruder.reports.cache`).
CACHES = {
    "default": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": os.environ["DJANGO_CACHE_URL"],
        }
        if os.environ.get("DJANGO_CACHE_URL")
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# Content-Security-Policy (django-csp): scripts only from this site or inline with the
# request's nonce (`<script nonce="{{ request.csp_nonce }}">`); inline style attributes
# stay allowed (progress bars). Prolific is a form-action because "Finish" redirects there.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, UNSAFE_INLINE],
        "img-src": [SELF, "data:"],
        "font-src": [SELF, "data:"],
        "connect-src": [SELF],
        "worker-src": [SELF, "blob:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
        "form-action": [SELF, "https://app.prolific.com"],
    }
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LOGIN_URL = "/accounts/login/"

# Background jobs (intruder.services.jobs). "db": `manage.py run_worker` polls the Job table,
# no extra server. "rq": jobs go to a Redis queue served by `manage.py run_worker` on any host
# (needs the optional extra `pip install -e .[rq]` and INTRUDER_REDIS_URL).
INTRUDER_JOB_BACKEND = os.environ.get("INTRUDER_JOB_BACKEND", "db")
INTRUDER_REDIS_URL = os.environ.get("INTRUDER_REDIS_URL", "redis://localhost:6379/0")
INTRUDER_RQ_QUEUE = os.environ.get("INTRUDER_RQ_QUEUE", "intruder")
# Where jobs that want a GPU go (attack runs with TRIA, and their folds); empty: the queue
# above. A GPU host serves it first: `run_worker --queues intruder-gpu,intruder`.
INTRUDER_RQ_GPU_QUEUE = os.environ.get("INTRUDER_RQ_GPU_QUEUE", "")
INTRUDER_JOB_STALE_MINUTES = float(os.environ.get("INTRUDER_JOB_STALE_MINUTES", "5"))
INTRUDER_JOB_MAX_ATTEMPTS = int(os.environ.get("INTRUDER_JOB_MAX_ATTEMPTS", "3"))
# Model folder the anonymization jobs load; empty = the shipped anonymize/models/ model.
INTRUDER_ANONYMIZER_MODEL = os.environ.get("INTRUDER_ANONYMIZER_MODEL", "")
# Where attack runs keep their cache (pretreated texts, pre-trained encoders, embeddings,
# shared by every run of the same settings) and each run's working files (fine-tuning
# checkpoints). Workers that share it reuse each other's work.
INTRUDER_ATTACK_DIR = Path(os.environ.get("INTRUDER_ATTACK_DIR", VAR_DIR / "attacks"))
# Store a report before anyone asks for it (an attack run's risk report at the end of its job,
# the demo's pages as it loads), so that its first view reads it: seconds of worker time each.
INTRUDER_PREPARE_REPORTS = os.environ.get("INTRUDER_PREPARE_REPORTS", "1") == "1"
# A lab's own predicted-human-risk calibration (`manage.py fit_predicted_risk`); empty: the
# one shipped in intruder/risk/, fitted on the public Textwash study 2.
INTRUDER_PREDICTED_CALIBRATION = os.environ.get("INTRUDER_PREDICTED_CALIBRATION", "")

# REST API (intruder.api): researchers only. Token auth for scripts, session auth for the
# browsable docs; participants are not Django users and so never authenticate here.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.OrderingFilter",
    ],
    "DEFAULT_PAGINATION_CLASS": "intruder.api.pagination.ApiPagination",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # The app's errors (IntruderError) and model ValidationErrors answered in one place.
    "EXCEPTION_HANDLER": "intruder.api.exception_handlers.exception_handler",
    "NUM_PROXIES": INTRUDER_NUM_PROXIES,
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Intruder platform API",
    "DESCRIPTION": "Studies, targets, descriptions, anonymized texts, participants, judgments "
    "and jobs of motivated-intruder studies. Researchers only: send `Authorization: Token ...`.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "PATH_CONVERTER_OVERRIDE": {
        "id": {"type": "integer", "minimum": 0, "maximum": 999_999_999_999_999_999}
    },
    "COMPONENT_SPLIT_REQUEST": True,
    # /api/docs/ and /api/redoc/ load their JavaScript from our own static files, not a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "ParticipantStatusEnum": "intruder.models.Participant.Status",
        "AnonymizedTextStatusEnum": "intruder.models.AnonymizedText.Status",
        "JobStatusEnum": "intruder.models.Job.Status",
        "JobKindEnum": "intruder.models.Job.Kind",
        "KindEnum": "intruder.models.Study.Kind",  # named so before jobs had kinds
        "PersonGroupEnum": "intruder.models.PersonGroup",
    },
}

# Server errors (with tracebacks) and warnings go to stderr and to var/logs/intruder.log,
# whatever DEBUG says: Django's default sends a 500's traceback only to ADMINS by mail, so
# with DEBUG off it was in no log at all. Every line passes the token redaction, traceback
# included. WatchedFileHandler, not rotation: several gunicorn workers share the file, and
# logrotate moves it safely.
INTRUDER_LOG_DIR = Path(os.environ.get("INTRUDER_LOG_DIR", VAR_DIR / "logs"))
INTRUDER_LOG_LEVEL = os.environ.get("INTRUDER_LOG_LEVEL", "WARNING").upper()
INTRUDER_LOG_DIR.mkdir(parents=True, exist_ok=True)
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "redacted": {
            "()": "intruder.log_redaction.RedactingFormatter",
            "format": "%(asctime)s %(levelname)s %(name)s [pid %(process)d] %(message)s",
        }
    },
    "handlers": {
        "stderr": {"class": "logging.StreamHandler", "formatter": "redacted"},
        "file": {
            "class": "logging.handlers.WatchedFileHandler",
            "filename": str(INTRUDER_LOG_DIR / "intruder.log"),
            "formatter": "redacted",
            "delay": True,
        },
    },
    "root": {"handlers": ["stderr", "file"], "level": INTRUDER_LOG_LEVEL},
    "loggers": {
        # Django's own handlers (mail to ADMINS; console only with DEBUG on) are replaced.
        "django": {"handlers": ["stderr", "file"], "level": INTRUDER_LOG_LEVEL, "propagate": False},
    },
}
