"""Which of scripts/test.sh's two pytest passes this is: one home for the flag both the
collection hook (tests/conftest.py) and the browser audits (tests/browser/axe.py) read."""

import os

# The PostgreSQL pass: only the tests that can reach the database, for what the database does.
SECOND_DATABASE_PASS = os.environ.get("INTRUDER_TEST_DATABASE_ONLY") == "1"

# The tests of the plain libraries, which never import Django (README, code map;
# tests/test_library_independence.py): none can reach the database, so the second pass does
# not even collect them. Importing them (torch, transformers' Trainer) cost each of its workers
# 5 of the 10.5 s a collection took.
LIBRARY_TEST_DIRS = frozenset({"anonymize", "attacks", "guard", "llm"})
