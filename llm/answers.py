"""Parse the JSON answers that the prompts ask for, as paper 002 does (`json.loads`).

Models often wrap JSON in a Markdown code fence or add a sentence around it; the outermost
JSON value is taken from the content. JSON mode (`response_format: json_object`) forces an
object, so an object holding one list of strings counts as that list.
"""

from __future__ import annotations

import json
import re
from typing import Any

from llm.errors import LLMAnswerError

FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def parse_json(content: str) -> Any:
    """Return the JSON value in `content`; raise LLMAnswerError('unparseable') if none."""
    fenced = FENCE.search(content)
    text = (fenced.group(1) if fenced else content).strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    starts = [i for i in (text.find("["), text.find("{")) if i >= 0]
    if starts:
        try:
            value, _ = json.JSONDecoder().raw_decode(text[min(starts) :])
            return value
        except ValueError:
            pass
    raise LLMAnswerError("unparseable", f"no JSON in the answer: {content[:120]!r}")


def parse_string_list(content: str) -> list[str]:
    """Return the JSON list of strings in `content` (numbers become strings, others drop).

    An object counts as its one list value (JSON mode); anything else is unparseable.
    """
    value = parse_json(content)
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list)]
        if len(lists) != 1:
            raise LLMAnswerError("unparseable", f"a JSON object, not a list: {content[:120]!r}")
        value = lists[0]
    if not isinstance(value, list):
        raise LLMAnswerError("unparseable", f"not a JSON list: {content[:120]!r}")
    return [
        str(item)
        for item in value
        if isinstance(item, str | int | float) and not isinstance(item, bool)
    ]
