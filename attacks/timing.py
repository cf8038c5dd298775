"""Wall time and windows/s per stage of an attack, kept in its run statistics."""

from __future__ import annotations

from typing import Any


class StageTimer:
    """Record wall time and windows/s per stage into a stats dict."""

    def __init__(self, stats: dict[str, Any]) -> None:
        self.stages: dict[str, Any] = stats.setdefault("stages", {})

    def record(self, stage: str, seconds: float, windows: int = 0, **extra: Any) -> None:
        """Add ``seconds`` and ``windows`` to ``stage``."""
        entry = self.stages.setdefault(stage, {"seconds": 0.0, "windows": 0})
        entry["seconds"] += seconds
        entry["windows"] += windows
        if entry["windows"] and entry["seconds"]:
            entry["windows_per_s"] = entry["windows"] / entry["seconds"]
        entry.update(extra)
