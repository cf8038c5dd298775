"""The Prolific webhook endpoint: thin; the rules live in `webhooks`."""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from intruder.prolific.signing import (
    EVENT_ID_HEADER,
    EVENT_TIME_HEADER,
    HOOK_SECRET_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
)
from intruder.prolific.webhooks import Delivery, DeliveryRefused, delivery_handle

logger = logging.getLogger(__name__)


@csrf_exempt  # Prolific signs its deliveries; there is no browser session to protect
@require_POST
def webhook(request: HttpRequest) -> HttpResponse:
    """Receive one delivery; 200 once handled (or a duplicate), 4xx when it fails checks."""
    hook_secret = request.headers.get(HOOK_SECRET_HEADER, "")
    if hook_secret and not request.headers.get(SIGNATURE_HEADER):
        # Subscription handshake: echo the header back (the REST-hooks convention); the
        # subscription is then confirmed with `manage.py prolific subscribe`.
        response = HttpResponse(status=200)
        response[HOOK_SECRET_HEADER] = hook_secret
        return response
    delivery = Delivery(
        body=request.body,
        signature=request.headers.get(SIGNATURE_HEADER, ""),
        request_timestamp=request.headers.get(TIMESTAMP_HEADER, ""),
        event_id=request.headers.get(EVENT_ID_HEADER, ""),
        event_time=request.headers.get(EVENT_TIME_HEADER, ""),
    )
    try:
        outcome = delivery_handle(delivery)
    except DeliveryRefused as refusal:
        logger.warning("Prolific webhook refused: %s", refusal)
        return JsonResponse({"error": str(refusal)}, status=refusal.status)
    return JsonResponse({"outcome": outcome.outcome, "released": outcome.released})
