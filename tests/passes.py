"""Which of scripts/test.sh's two pytest passes this is: one home for the flag both the
collection hook (tests/conftest.py) and the browser audits (tests/browser/axe.py) read."""

import os

# The PostgreSQL pass: only the tests that can reach the database, for what the database does.
SECOND_DATABASE_PASS = os.environ.get("INTRUDER_TEST_DATABASE_ONLY") == "1"
