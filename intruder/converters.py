"""URL converters: database ids that fit a 64-bit integer column."""

from __future__ import annotations


class DatabaseIdConverter:
    """Match a row id of at most 18 digits (always below 2**63).

    Django's `int` converter accepts any length, and a larger id makes the database
    lookup overflow (a 500 on SQLite and PostgreSQL) instead of answering 404.
    """

    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)
