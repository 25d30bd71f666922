"""Verifying the signed receipts hitl issues for approved actions.

An approved action's ``result["receipt"]`` is a compact JWS (EdDSA, Ed25519)
binding the interaction, the agent, the tool and the SHA-256 of the approved
arguments. Verifying needs the ``cryptography`` package (``pip install
hitl[receipts]``); the rest of the client stays standard-library only. See
docs/receipts.md.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import time
import urllib.request
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any


class ReceiptError(Exception):
    """A receipt does not hold; the message says why."""


def fetch_receipt_keys(url: str, timeout: float = 10.0) -> dict[str, Any]:
    """Returns the server's published receipt keys (GET /.well-known/jwks.json)."""
    with urllib.request.urlopen(url.rstrip("/") + "/.well-known/jwks.json", timeout=timeout) as resp:
        keys: dict[str, Any] = json.loads(resp.read())
        return keys


def verify_receipt(
    receipt: str,
    keys: dict[str, Any],
    *,
    args: Any = None,
    interaction_id: str | None = None,
    name: str | None = None,
    kind: str | None = None,
    now: float | None = None,
) -> dict[str, Any]:
    """Checks a receipt against ``keys`` (a JWKS) and the call it must stand for.

    Returns its claims, or raises :class:`ReceiptError` saying why it does not
    hold: malformed, a key not published, a forged signature, expired, or
    another interaction, tool, kind or arguments (each checked when given).
    """
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    parts = (receipt or "").strip().split(".")
    if len(parts) != 3:
        raise ReceiptError("receipt is not a compact JWS")
    try:
        header = json.loads(_b64url(parts[0]))
        claims: dict[str, Any] = json.loads(_b64url(parts[1]))
        signature = _b64url(parts[2])
    except ValueError:
        raise ReceiptError("receipt is not a compact JWS") from None
    if not isinstance(header, dict) or header.get("alg") != "EdDSA" or "crit" in header:
        raise ReceiptError("receipt is not a compact JWS signed with EdDSA")
    kid = header.get("kid") or ""
    jwk = next((k for k in keys.get("keys", []) if kid and k.get("kid") == kid), None)
    if jwk is None or jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519" or not jwk.get("x"):
        raise ReceiptError(f'receipt is signed with key "{kid}", which is not published (rotated out, or not this server\'s)')
    try:
        Ed25519PublicKey.from_public_bytes(_b64url(jwk["x"])).verify(signature, f"{parts[0]}.{parts[1]}".encode("ascii"))
    except (InvalidSignature, ValueError):
        raise ReceiptError(f'receipt signature does not verify with key "{kid}": it was forged or altered') from None
    if not isinstance(claims, dict) or not claims.get("sub") or not claims.get("name") or not claims.get("args_sha256"):
        raise ReceiptError("receipt lacks its interaction, tool or arguments")
    exp = claims.get("exp") or 0
    if (time.time() if now is None else now) >= exp:
        raise ReceiptError(f"receipt expired at {datetime.fromtimestamp(exp, timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')}")
    if interaction_id is not None and interaction_id != claims["sub"]:
        raise ReceiptError(f"receipt is for interaction {claims['sub']}, not {interaction_id}")
    if name is not None and name != claims["name"]:
        raise ReceiptError(f'receipt is for tool "{claims["name"]}", not "{name}"')
    if kind is not None and kind != claims.get("kind", ""):
        raise ReceiptError(f'receipt is for kind "{claims.get("kind", "")}", not "{kind}"')
    if args is not None:
        digest = args_sha256(args)
        if digest != claims["args_sha256"]:
            raise ReceiptError(f"receipt was issued for other args (SHA-256 {claims['args_sha256']}, these are {digest})")
    return claims


def args_sha256(args: Any) -> str:
    """Returns the hex SHA-256 of the canonical JSON (RFC 8785) of args."""
    return hashlib.sha256(canonical_json(args).encode("utf-8")).hexdigest()


def canonical_json(value: Any) -> str:
    """Returns value in the JSON Canonicalization Scheme (RFC 8785)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return _es_number(float(value))
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical_json(v) for v in value) + "]"
    if isinstance(value, dict):
        keys: list[str] = sorted(value, key=_utf16)
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + canonical_json(value[k]) for k in keys) + "}"
    raise TypeError(f"canonical_json: {type(value).__name__} is not JSON")


def _es_number(x: float) -> str:
    """Writes x as ECMAScript's Number::toString does (RFC 8785, 3.2.2.3)."""
    if not math.isfinite(x):
        raise ValueError("canonical_json: NaN and infinities are not JSON")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    # The shortest digits that round-trip (repr's), as 0.d × 10^n.
    t = Decimal(repr(abs(x))).as_tuple()
    d = "".join(map(str, t.digits)).lstrip("0")
    exponent = int(t.exponent) + (len(d) - len(d.rstrip("0")))
    d = d.rstrip("0")
    k = len(d)
    n = exponent + k
    if k <= n <= 21:
        return sign + d + "0" * (n - k)
    if 0 < n <= 21:
        return sign + d[:n] + "." + d[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + d
    e_out = n - 1
    m = d[0] + ("." + d[1:] if k > 1 else "")
    return sign + m + "e" + ("+" if e_out > 0 else "-") + str(abs(e_out))


def _utf16(key: str) -> bytes:
    """Sorts keys by their UTF-16 code units, as RFC 8785 does."""
    return key.encode("utf-16-be")


def _b64url(s: str) -> bytes:
    if not all(c.isalnum() or c in "-_" for c in s):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
