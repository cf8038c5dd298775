"""Where the endpoint is and how to sample: from the environment, never from pages or exports.

`LLMSettings.from_env` reads `LLM_BASE_URL`, `LLM_MODEL` and `LLM_API_KEY` (the key is never
written to a result, a log line or `repr`); `sampling()` is what every result records.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any
from urllib.parse import urlsplit

from llm.errors import LLMUnavailable

ENV_PREFIX = "LLM_"
DEFAULT_CACHE_DIR = "runs/cache/llm"


@dataclass(frozen=True)
class LLMSettings:
    """Configure one endpoint, one model and its sampling; validated on creation."""

    base_url: str = field(
        default="", metadata={"help": "OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1"}
    )
    model: str = field(default="", metadata={"help": "Model name the endpoint serves."})
    api_key: str = field(default="", repr=False, metadata={"help": "Bearer key (never recorded)."})
    temperature: float | None = field(
        default=None,
        metadata={"help": "Sampling temperature; None = the server's default (paper 002: 1)."},
    )
    max_tokens: int | None = field(
        default=1024, metadata={"help": "Most tokens per answer; an answer cut here is retried."}
    )
    seed: int | None = field(default=None, metadata={"help": "Sampling seed, where served."})
    json_mode: bool = field(
        default=False,
        metadata={"help": "Send response_format json_object (paper 002 forced JSON)."},
    )
    timeout_s: float = field(default=120.0, metadata={"help": "Seconds per request."})
    max_retries: int = field(default=4, metadata={"help": "Retries after a failed request."})
    backoff_s: float = field(
        default=1.0, metadata={"help": "First back-off; doubles per retry (Retry-After wins)."}
    )
    max_backoff_s: float = field(default=60.0, metadata={"help": "Longest back-off."})
    concurrency: int = field(default=4, metadata={"help": "Requests in flight at once."})
    max_answer_chars: int = field(
        default=20_000,
        metadata={
            "help": "Longest answer kept; a longer one is refused as `too_long`, read no further "
            "than that (a hostile endpoint's 25 MB answer never reaches memory or a job)."
        },
    )
    prompt_price_per_mtok: float | None = field(
        default=None, metadata={"help": "USD per million prompt tokens, for the cost estimate."}
    )
    completion_price_per_mtok: float | None = field(
        default=None, metadata={"help": "USD per million completion tokens."}
    )
    cache_dir: str = field(
        default=DEFAULT_CACHE_DIR, metadata={"help": "Answer cache folder; '' disables it."}
    )

    def __post_init__(self) -> None:
        if self.temperature is not None and not 0 <= self.temperature <= 2:
            raise ValueError(f"temperature must lie in [0, 2], got {self.temperature}")
        if not 1 <= self.max_answer_chars <= 1_000_000:
            raise ValueError(
                f"max_answer_chars must lie in [1, 1000000], got {self.max_answer_chars}"
            )
        for name in ("timeout_s", "concurrency"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")
        if self.max_retries < 0 or self.backoff_s < 0:
            raise ValueError("max_retries and backoff_s must be >= 0")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> LLMSettings:
        """Read the LLM_* variables (docs/configuration.md); `overrides` that are not None win."""
        env = os.environ if env is None else env
        raw = {
            "base_url": _env_read("LLM_BASE_URL", env),
            "model": _env_read("LLM_MODEL", env),
            "api_key": _env_read("LLM_API_KEY", env),
            "temperature": _env_read("LLM_TEMPERATURE", env),
            "max_tokens": _env_read("LLM_MAX_TOKENS", env),
            "seed": _env_read("LLM_SEED", env),
            "json_mode": _env_read("LLM_JSON_MODE", env),
            "timeout_s": _env_read("LLM_TIMEOUT_S", env),
            "max_retries": _env_read("LLM_MAX_RETRIES", env),
            "backoff_s": _env_read("LLM_BACKOFF_S", env),
            "max_backoff_s": _env_read("LLM_MAX_BACKOFF_S", env),
            "concurrency": _env_read("LLM_CONCURRENCY", env),
            "max_answer_chars": _env_read("LLM_MAX_ANSWER_CHARS", env),
            "prompt_price_per_mtok": _env_read("LLM_PROMPT_PRICE_PER_MTOK", env),
            "completion_price_per_mtok": _env_read("LLM_COMPLETION_PRICE_PER_MTOK", env),
            "cache_dir": _env_read("LLM_CACHE_DIR", env),
        }
        kinds = {f.name: str(f.type) for f in fields(cls)}
        values = {
            name: _parse(name, value, kinds[name])
            for name, value in raw.items()
            if value is not None and (value != "" or name == "cache_dir")
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def require_endpoint(self) -> None:
        """Raise LLMUnavailable naming what is missing, before anything is sent."""
        if not self.base_url:
            raise LLMUnavailable(
                "no LLM endpoint: set LLM_BASE_URL (e.g. http://127.0.0.1:8080/v1 for a local "
                "vLLM or llama.cpp server, https://api.openai.com/v1 for OpenAI)"
            )
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise LLMUnavailable(f"LLM_BASE_URL must be an http(s) URL, got {self.base_url!r}")
        if not self.model:
            raise LLMUnavailable("no LLM model: set LLM_MODEL to a model the endpoint serves")
        if not self.api_key and not is_loopback(parts.hostname):
            raise LLMUnavailable(
                f"no API key for {parts.hostname}: set LLM_API_KEY (only a server on this "
                "machine, such as a local vLLM, may go without one)"
            )

    def sampling(self) -> dict[str, Any]:
        """Return the model and every sampling setting, as recorded with each result."""
        return {
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "json_mode": self.json_mode,
        }


def is_loopback(host: str) -> bool:
    """Return whether `host` names this machine (where keyless local servers run)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _env_read(name: str, env: Mapping[str, str]) -> str | None:
    """Return the variable `name` of `env` (named literally, so the docs test finds it)."""
    return env.get(name)


def _parse(name: str, raw: str, kind: str) -> Any:
    """Convert one environment value to its field's type, naming the variable on error."""
    try:
        if "bool" in kind:
            return raw.strip().lower() in ("1", "true", "yes", "on")
        if "float" in kind:
            return float(raw)
        if "int" in kind:
            return int(raw)
    except ValueError:
        raise ValueError(f"{ENV_PREFIX}{name.upper()}={raw!r} is not a {kind}") from None
    return raw
