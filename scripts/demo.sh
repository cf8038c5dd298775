#!/usr/bin/env bash
# Set up a fresh machine and start the platform on the demo studies (SQLite, embedded worker).
# Usage: scripts/demo.sh
# Env: DEMO_HOST (127.0.0.1; 0.0.0.0 to listen on every interface), DEMO_PORT (8000),
#      DEMO_RESEARCHER_PASSWORD (intruder-demo), INTRUDER_VAR_DIR (./var: database, static).
set -euo pipefail
cd "$(dirname "$0")/.."
START=$SECONDS
# Every step says what it does and when it started: a first start takes minutes.
step() { printf '\n[demo %4ds] %s\n' "$((SECONDS - START))" "$*"; }
step "1/5 python environment in .venv (scripts/setup.sh: seconds when installed, minutes cold)"
scripts/setup.sh
. .venv/bin/activate
# Demo mode: the well-known demo password logs in, and the two demo studies over the same
# invented persons may be open together (never set INTRUDER_DEMO in a real deployment).
export INTRUDER_DEMO=1
# A random secret key kept in var/ (the server refuses the public default with DEBUG off).
KEY_FILE="${INTRUDER_VAR_DIR:-var}/secret_key"
mkdir -p "$(dirname "$KEY_FILE")"
[ -s "$KEY_FILE" ] || (umask 077; python -c 'import secrets; print(secrets.token_urlsafe(50))' >"$KEY_FILE")
export DJANGO_SECRET_KEY=${DJANGO_SECRET_KEY:-$(cat "$KEY_FILE")}
HOST=${DEMO_HOST:-127.0.0.1}
PORT=${DEMO_PORT:-8000}
if [ "$HOST" = "0.0.0.0" ]; then
    export DJANGO_ALLOWED_HOSTS=${DJANGO_ALLOWED_HOSTS:-*}
    SHOWN_HOST=$(hostname -I 2>/dev/null | awk '{print $1}')
    SHOWN_HOST=${SHOWN_HOST:-127.0.0.1}
else
    SHOWN_HOST=$HOST
fi
step "2/5 database: applying migrations (${INTRUDER_VAR_DIR:-var}/db.sqlite3)"
python manage.py migrate --noinput -v 1
step "3/5 static files (collectstatic)"
python manage.py collectstatic --noinput -v 1
# Idempotent: creates what is missing, anonymizes pending descriptions with the shipped model.
step "4/5 demo studies: import, anonymize, invented judgments, risk check (a minute or two the first time)"
python manage.py load_demo --base-url "http://$SHOWN_HOST:$PORT"

LOG_DIR=${INTRUDER_VAR_DIR:-var}
mkdir -p "$LOG_DIR"
python manage.py run_worker >"$LOG_DIR/worker.log" 2>&1 &
WORKER_PID=$!
trap 'kill "$WORKER_PID" 2>/dev/null || true' EXIT INT TERM
step "5/5 starting the background worker and the web server (ready after $((SECONDS - START)) s)"
echo "  Background worker: pid $WORKER_PID (log: $LOG_DIR/worker.log)"
echo "  Serving on http://$SHOWN_HOST:$PORT/  (Ctrl-C stops the site and the worker)"
python manage.py runserver "$HOST:$PORT" --noreload
