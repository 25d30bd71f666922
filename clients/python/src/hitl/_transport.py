"""One HTTP request to the server, over the standard library's urllib."""

from __future__ import annotations

import http.client
import json
import os
import random
import socket
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from ._errors import HitlError, Unreachable, error_from_response

__all__ = ["DEFAULT_URL", "Transport", "backoff"]

#: Where the client looks for the server when neither ``url`` nor HITL_URL is given.
DEFAULT_URL = "http://127.0.0.1:7878"

#: The package version, sent in the User-Agent header.
VERSION = "0.1.0"

# Retry pauses after a failed or cut-short long-poll: doubling from the
# first, capped at the last, with jitter.
_MIN_BACKOFF = 0.1
_MAX_BACKOFF = 5.0


def backoff(attempt: int) -> float:
    """Returns the pause in seconds before retry number ``attempt`` (from 0):
    doubling from 0.1 s, capped at 5 s, between half and all of it so that
    many agents do not retry in step."""
    d = min(_MIN_BACKOFF * float(2 ** min(attempt, 16)), _MAX_BACKOFF)
    return d / 2 + random.uniform(0, d / 2)


class Transport:
    """Sends requests to one server: JSON in and out, the bearer token,
    and failures turned into the client's exceptions. Safe to share between
    threads: it keeps no connection state."""

    def __init__(self, url: str | None, token: str | None, timeout: float) -> None:
        base = url or os.environ.get("HITL_URL") or DEFAULT_URL
        parsed = urllib.parse.urlsplit(base)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"hitl: server URL must be http:// or https://, got {base!r}")
        self.base_url = base.rstrip("/")
        self._token = token if token is not None else os.environ.get("HITL_TOKEN") or None
        self.timeout = timeout
        self._opener = urllib.request.build_opener()

    def request(
        self, method: str, path: str, body: Any = None, *, timeout: float | None = None
    ) -> tuple[int, Any]:
        """Sends one request and returns the status and the decoded JSON
        body. A refused request raises the server's error (HitlError
        subclass by code); no complete response raises Unreachable."""
        data = None if body is None else json.dumps(body).encode("utf-8")
        req = urllib.request.Request(self.base_url + path, data=data, method=method)
        req.add_header("Accept", "application/json")
        req.add_header("User-Agent", f"hitl-python/{VERSION}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self._token:
            req.add_header("Authorization", f"Bearer {self._token}")
        where = f"{method} {self.base_url}{path.split('?')[0]}"
        try:
            with self._opener.open(req, timeout=timeout or self.timeout) as resp:
                status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as e:
            with e:
                try:
                    raw = e.read(1 << 20)
                except (OSError, http.client.HTTPException):
                    raw = b""
                raise error_from_response(e.code, raw, e.headers.get("Retry-After")) from None
        except (OSError, http.client.HTTPException) as e:
            # URLError (refused, DNS), timeouts, resets, a closed connection.
            reason = e.reason if isinstance(e, urllib.error.URLError) else e
            if isinstance(reason, socket.timeout):
                reason = "timed out"
            raise Unreachable(f"{where}: {reason or type(e).__name__}") from e
        try:
            return status, json.loads(raw)
        except ValueError:
            raise HitlError(
                f"{where}: response is not JSON (HTTP {status})", code="unexpected_response", status=status
            ) from None
