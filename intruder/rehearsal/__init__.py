"""The dress rehearsal of a study: a simulated crowd plays it on a throwaway copy, through the
sandbox Prolific, and every invariant of money, data and report is checked
(`manage.py rehearse`, docs/rehearsal.md)."""
