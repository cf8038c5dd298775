"""One client for any OpenAI-compatible chat endpoint (vLLM, llama.cpp, Ollama, hosted APIs).

Both libraries use it (`anonymize.llm` asks for PSI terms, `attacks.llm` asks who is
described), so it lives here and imports neither of them, nor Django. It needs no model
weights: the model runs behind the endpoint. `settings` reads the endpoint from the
environment, `client` sends chat requests with retries, a concurrency limit and token
accounting, `cache` keeps every answer on disk so a run is reproducible and resumable, and
`answers` parses the JSON that the prompts ask for.
"""

from llm.client import Completion, LLMClient, RunUsage
from llm.errors import LLMAnswerError, LLMCancelled, LLMError, LLMUnavailable
from llm.settings import LLMSettings

__all__ = [
    "Completion",
    "LLMAnswerError",
    "LLMCancelled",
    "LLMClient",
    "LLMError",
    "LLMSettings",
    "LLMUnavailable",
    "RunUsage",
]
