"""Settings for the intruder platform.

Embedded default: SQLite in ./var. Beyond one machine: set DATABASE_URL (PostgreSQL).
"""

import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("INTRUDER_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "dev-only-insecure-key-change-me")
DEBUG = os.environ.get("DJANGO_DEBUG", "0") == "1"
ALLOWED_HOSTS = os.environ.get(
    "DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver"
).split(",")

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
    "intruder",
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
]

ROOT_URLCONF = "intruder.urls"
WSGI_APPLICATION = "intruder.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
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
INTRUDER_JOB_STALE_MINUTES = float(os.environ.get("INTRUDER_JOB_STALE_MINUTES", "5"))
INTRUDER_JOB_MAX_ATTEMPTS = int(os.environ.get("INTRUDER_JOB_MAX_ATTEMPTS", "3"))
# Model folder the anonymization jobs load; empty = the shipped anonymize/models/ model.
INTRUDER_ANONYMIZER_MODEL = os.environ.get("INTRUDER_ANONYMIZER_MODEL", "")

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
    "COMPONENT_SPLIT_REQUEST": True,
    # /api/docs/ and /api/redoc/ load their JavaScript from our own static files, not a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "ParticipantStatusEnum": "intruder.models.Participant.Status",
        "AnonymizedTextStatusEnum": "intruder.models.AnonymizedText.Status",
        "JobStatusEnum": "intruder.models.Job.Status",
        "PersonGroupEnum": "intruder.models.PersonGroup",
    },
}
