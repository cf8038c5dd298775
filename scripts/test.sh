#!/usr/bin/env bash
# Set up a fresh machine and run the whole test suite: lint, then pytest on SQLite, then
# pytest again on a throwaway PostgreSQL server that this script starts and removes itself.
# Both passes use a throwaway Redis server, also started here and removed on exit; the
# PostgreSQL pass runs the job tests through real RQ workers on it.
#
# Usage: scripts/test.sh [pytest args...]      (the args go to both pytest runs)
#
# What it installs where missing (Debian, as root or via sudo): the `postgresql` server,
# `redis-server`, `chromium` (driven by Playwright's Python package through executable_path; never
# `playwright install`) and `npm`. Everything Python comes from pyproject.toml, and axe-core
# (the browser tests' accessibility audit) from package.json, via scripts/setup.sh --dev.
#
# Environment:
#   TEST_PG_URL=postgres://...   use this PostgreSQL server instead of starting one
#   TEST_REDIS_URL=redis://...   use this Redis server instead of starting one
#   TEST_SKIP_PG=1               run the SQLite pass only (quick local runs)
#   TEST_SKIP_LINT=1             skip ruff (quick local runs)
#   TEST_SKIP_SETUP=1            use .venv as it is (a run inside a run must not reinstall it)
#   TEST_PG_MARKERS="not (slow or browser) or redis or postgres"   marker expression of the PostgreSQL pass (see below)
#   TEST_PASS_TIMEOUT=40m        hard limit per pytest pass, so CI never hangs
#   TEST_WORKERS=N               pytest-xdist workers per pass (default: the CPU count, at most
#                                4; 1 runs the tests in this process); each gets
#                                OMP_NUM_THREADS = CPUs / N torch threads unless it is set
#
# The PostgreSQL pass runs only the tests that can reach the database
# (INTRUDER_TEST_DATABASE_ONLY=1, see tests/conftest.py): the others would only repeat what
# the SQLite pass proved. Of those it skips the `slow` tests (most load the real models and
# research data) and the `browser` tests (what a browser does with a page: keys, layout,
# telemetry, audits; the server's side of it is tested through Django's test client on
# both databases), except those marked `postgres` or `redis`: the browser flows where the
# engine can change the outcome (the live server's threads and the test write the same rows
# on their own connections, which SQLite's shared in-memory database never does), the RQ
# workers sharing a database, the API fuzzing. Services, assignment under concurrency, the
# API and the views all run on both databases.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n=== %s\n' "$*"; }

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"
    elif command -v sudo >/dev/null 2>&1; then sudo "$@"
    else return 1
    fi
}

pg_bindir() {
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

install_system_packages() {
    local missing=()
    [ -n "${TEST_PG_URL:-}" ] || [ "${TEST_SKIP_PG:-0}" = 1 ] || [ -n "$(pg_bindir)" ] \
        || missing+=(postgresql)
    [ -n "${TEST_REDIS_URL:-}" ] || command -v redis-server >/dev/null 2>&1 \
        || [ -x /usr/bin/redis-server ] || missing+=(redis-server)
    [ -x /usr/bin/chromium ] || missing+=(chromium)
    command -v npm >/dev/null 2>&1 || missing+=(npm)  # axe-core for the accessibility audit
    [ ${#missing[@]} -gt 0 ] || return 0
    log "installing Debian packages: ${missing[*]}"
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "test.sh: apt-get not found; install ${missing[*]} yourself" >&2
        return 1
    fi
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

PG_DIR=""
PG_CTL=""
PG_USER_CMD=()

stop_postgres() {
    if [ -n "$PG_DIR" ] && [ -d "$PG_DIR" ]; then
        "${PG_USER_CMD[@]}" "$PG_CTL" -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
        rm -rf "$PG_DIR"
    fi
}

# Start a throwaway cluster in a temp dir on a free loopback port; set PG_URL to it.
start_postgres() {
    local bindir port
    bindir=$(pg_bindir)
    [ -n "$bindir" ] || { echo "test.sh: PostgreSQL binaries not found" >&2; return 1; }
    PG_CTL="$bindir/pg_ctl"
    PG_DIR=$(mktemp -d /tmp/intruder-pg.XXXXXX)
    if [ "$(id -u)" = 0 ]; then
        # initdb refuses to run as root: the cluster belongs to the postgres system user.
        id postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql postgres
        chown postgres "$PG_DIR"
        PG_USER_CMD=(runuser -u postgres --)
    fi
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "${PG_USER_CMD[@]}" "$bindir/initdb" -D "$PG_DIR/data" -U postgres -A trust -E UTF8 \
        --locale=C.UTF-8 --no-sync >"$PG_DIR/initdb.log" 2>&1 \
        || { cat "$PG_DIR/initdb.log" >&2; return 1; }
    # Durability off: a test database is thrown away, and fsync dominates on a shared disk.
    "${PG_USER_CMD[@]}" "$PG_CTL" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 start \
        -o "-p $port -k $PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off \
            -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
        >/dev/null || { cat "$PG_DIR/server.log" >&2; return 1; }
    "${PG_USER_CMD[@]}" "$bindir/createdb" -h 127.0.0.1 -p "$port" -U postgres intruder
    PG_URL="postgres://postgres@127.0.0.1:$port/intruder"
}

REDIS_DIR=""

stop_redis() {
    if [ -n "$REDIS_DIR" ] && [ -d "$REDIS_DIR" ]; then
        [ -f "$REDIS_DIR/redis.pid" ] && kill "$(cat "$REDIS_DIR/redis.pid")" 2>/dev/null || true
        rm -rf "$REDIS_DIR"
    fi
}

# Start a throwaway Redis (no persistence) on a free loopback port; set REDIS_URL to it.
start_redis() {
    local server port
    server=$(command -v redis-server || echo /usr/bin/redis-server)
    REDIS_DIR=$(mktemp -d /tmp/intruder-redis.XXXXXX)
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$server" --bind 127.0.0.1 --port "$port" --dir "$REDIS_DIR" --save "" --appendonly no \
        --daemonize yes --pidfile "$REDIS_DIR/redis.pid" --logfile "$REDIS_DIR/redis.log" \
        || { cat "$REDIS_DIR/redis.log" >&2 2>/dev/null; return 1; }
    for _ in $(seq 50); do
        python3 - "$port" <<'PY' && break
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1)
s.sendall(b"PING\r\n")
sys.exit(0 if s.recv(16).startswith(b"+PONG") else 1)
PY
        sleep 0.1
    done
    REDIS_URL="redis://127.0.0.1:$port/0"
}

cleanup() {
    stop_postgres
    stop_redis
    [ -z "${MIGRATION_CACHE:-}" ] || rm -rf "$MIGRATION_CACHE"
}

trap cleanup EXIT

# Python may cache the project's and the tests' bytecode (an environment that forbids it,
# PYTHONDONTWRITEBYTECODE=1, makes every worker and child process compile them again: a
# pytest collection took 16 s instead of 10.5). So setup need not compile every installed
# file up front (SETUP_BYTECODE=lazy, scripts/setup.sh): imports compile what they use, once.
unset PYTHONDONTWRITEBYTECODE

install_system_packages
if [ "${TEST_SKIP_SETUP:-0}" = 1 ] && [ -x .venv/bin/python ]; then
    log "python environment: .venv as it is (TEST_SKIP_SETUP=1)"
else
    log "python environment (scripts/setup.sh --dev)"
    SETUP_BYTECODE=lazy scripts/setup.sh --dev
fi
. .venv/bin/activate

if [ "${TEST_SKIP_LINT:-0}" != 1 ]; then
    log "lint (ruff)"
    ruff check .
    ruff format --check .
fi

# The processes that migrate a new SQLite database (rehearsals, benchmarks' throwaway
# databases, about twenty in all) start from one migrated copy made in this run
# (intruder/management/commands/migrate.py): about 4 s of CPU less each.
MIGRATION_CACHE=$(mktemp -d /tmp/intruder-migrated.XXXXXX)
export INTRUDER_MIGRATION_CACHE=$MIGRATION_CACHE

# CI must run the browser tests, not skip them: the browser fixture fails instead of skipping.
export INTRUDER_REQUIRE_BROWSER=1
TIMEOUT=${TEST_PASS_TIMEOUT:-40m}

# The RQ tests run real workers on a real Redis; CI must run them, not skip them.
if [ -n "${TEST_REDIS_URL:-}" ]; then
    REDIS_URL=$TEST_REDIS_URL
else
    log "starting a throwaway Redis server"
    start_redis
fi
export INTRUDER_TEST_REDIS_URL=$REDIS_URL INTRUDER_REQUIRE_REDIS=1

CPUS=$(nproc 2>/dev/null || echo 1)
WORKERS=${TEST_WORKERS:-$(( CPUS < 4 ? CPUS : 4 ))}
# The tests of a file that share a module fixture (the trained TRIA rig, a built wheel) stay
# on one worker, so it is built once (tests/conftest.py groups them; the rest go to whichever
# worker is free), and each worker's torch gets its share of the cores: a thread per core in
# every worker made the tiny-model tests 4.7x costlier in CPU.
if [ "$WORKERS" -gt 1 ]; then
    XDIST=(-n "$WORKERS" --dist loadgroup)
    export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(( CPUS / WORKERS > 0 ? CPUS / WORKERS : 1 ))}
else
    XDIST=(-p no:xdist)
fi

log "pytest on SQLite (${WORKERS} worker(s))"
env -u DATABASE_URL timeout "$TIMEOUT" python -m pytest "${XDIST[@]}" "$@"

if [ "${TEST_SKIP_PG:-0}" = 1 ]; then
    log "PostgreSQL pass skipped (TEST_SKIP_PG=1)"
    exit 0
fi
if [ -n "${TEST_PG_URL:-}" ]; then
    PG_URL=$TEST_PG_URL
else
    log "starting a throwaway PostgreSQL server"
    start_postgres
fi
PG_MARKERS=${TEST_PG_MARKERS:-not (slow or browser) or redis or postgres}
log "pytest on PostgreSQL ($PG_URL, -m \"$PG_MARKERS\", database tests only)"
DATABASE_URL=$PG_URL INTRUDER_TEST_DATABASE_ONLY=1 timeout "$TIMEOUT" \
    python -m pytest "${XDIST[@]}" -m "$PG_MARKERS" "$@"
