"""Verifying the webhooks hitl sends, as Standard Webhooks signs them."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from collections.abc import Mapping

#: How far a delivery's timestamp may be from now, in seconds.
DEFAULT_TOLERANCE = 5 * 60


class WebhookVerificationError(Exception):
    """A delivery whose signature or timestamp does not check out."""


def _header(headers: Mapping[str, str], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return ""


def verify_webhook(
    secret: str,
    headers: Mapping[str, str],
    body: bytes | str,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    now: float | None = None,
) -> None:
    """Checks a delivery hitl sent to a ``callback_url`` or a subscription.

    ``secret`` is ``whsec_…`` (``hitl webhook secret`` for callbacks, or the
    subscription's); ``headers`` the request's headers (any case); ``body``
    the exact bytes received, before parsing. One of the ``v1,`` signatures
    in ``webhook-signature`` must be the base64 HMAC-SHA256, keyed with the
    secret's bytes, of ``"{webhook-id}.{webhook-timestamp}.{body}"``, and
    the timestamp within ``tolerance`` seconds of ``now``. Raises
    :class:`WebhookVerificationError` otherwise.
    """
    try:
        key = base64.b64decode(secret.strip().removeprefix("whsec_"), validate=True)
    except (binascii.Error, ValueError) as e:
        raise WebhookVerificationError("the secret must be whsec_ followed by base64") from e
    msg_id = _header(headers, "webhook-id")
    stamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    if not msg_id or not stamp or not signatures:
        raise WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature")
    try:
        sent = int(stamp)
    except ValueError as e:
        raise WebhookVerificationError("webhook-timestamp is not a number") from e
    if abs((time.time() if now is None else now) - sent) > tolerance:
        raise WebhookVerificationError("webhook-timestamp is too far from now")
    data = body.encode() if isinstance(body, str) else body
    mac = hmac.new(key, f"{msg_id}.{stamp}.".encode() + data, hashlib.sha256).digest()
    want = base64.b64encode(mac).decode()
    for sig in signatures.split():
        version, _, value = sig.partition(",")
        if version == "v1" and hmac.compare_digest(value, want):
            return
    raise WebhookVerificationError("no matching signature")
