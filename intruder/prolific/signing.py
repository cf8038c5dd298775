"""Prolific's webhook signature: base64(HMAC-SHA256(secret, timestamp + body)).

As documented at docs.prolific.com/api-reference/webhooks/verifying: the delivery carries
X-Prolific-Request-Signature and X-Prolific-Request-Timestamp (UNIX seconds). One home for
the scheme, used by the endpoint and by the fake server that signs its deliveries.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

SIGNATURE_HEADER = "X-Prolific-Request-Signature"
TIMESTAMP_HEADER = "X-Prolific-Request-Timestamp"
EVENT_ID_HEADER = "X-Event-ID"
EVENT_TIME_HEADER = "X-Timestamp"
HOOK_SECRET_HEADER = "X-Hook-Secret"


def sign(*, secret: str, timestamp: str, body: bytes) -> str:
    """Return the signature Prolific sends for this body and request timestamp."""
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def signature_valid(*, secret: str, timestamp: str, body: bytes, signature: str) -> bool:
    """Return whether `signature` is this body's (constant-time comparison)."""
    if not (secret and timestamp and signature):
        return False
    return hmac.compare_digest(sign(secret=secret, timestamp=timestamp, body=body), signature)
