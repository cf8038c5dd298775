"""URL converters: database ids of the length a 64-bit integer column can hold."""

from __future__ import annotations


class DatabaseIdConverter:
    """Match a row id of at most 18 digits (always below 2**63).

    Since Django 5.0 an out-of-range integer lookup matches nothing, so `int` would answer
    404 too; the bound keeps the URL pattern honest (no row has a longer id) and answers
    before a view or the database sees the value.
    """

    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)
