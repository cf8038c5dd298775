"""Errors of an import: each problem located by line and field, and nothing written."""

from __future__ import annotations

from dataclasses import dataclass

from intruder.exceptions import IntruderError


@dataclass(frozen=True)
class RowError:
    """One problem in an uploaded file, located by line and field."""

    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}, field '{self.field}': {self.message}"


class ImportValidationError(IntruderError):
    """The file has errors; nothing was written."""

    def __init__(self, errors: list[RowError]) -> None:
        self.errors = errors
        shown = "; ".join(str(e) for e in errors[:5])
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        super().__init__(f"{len(errors)} error(s), nothing imported: {shown}{more}")


class ImportRunning(ImportValidationError):
    """Another import into this study is still running."""

    status_code = 409
