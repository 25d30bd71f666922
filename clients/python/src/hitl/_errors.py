"""The exceptions every call may raise: the server's errors, one class per code."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._types import Interaction

__all__ = [
    "HitlError",
    "InvalidRequest",
    "Unauthorized",
    "Forbidden",
    "NotFound",
    "Conflict",
    "Expired",
    "Cancelled",
    "InvalidAnswer",
    "RateLimited",
    "Unavailable",
    "Unreachable",
    "error_from_response",
]


class HitlError(Exception):
    """Base class of every error the client raises.

    ``code`` is the server's error code (``"expired"``, ``"invalid_value"``,
    ...) or, for failures without an answer from the server, ``"unreachable"``;
    ``message`` is the server's message; ``status`` is the HTTP status (None
    when there was no response, or when the error is an interaction's
    outcome rather than a refused request).
    """

    #: The code this class stands for when the server sends no body.
    default_code = "internal"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        status: int | None = None,
        interaction: Interaction | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.status = status
        #: The interaction the error is about, when the client has it (for
        #: example the expired or cancelled one).
        self.interaction = interaction

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r}, status={self.status!r})"


class InvalidRequest(HitlError):
    """The server refused a malformed or incomplete request (400), or one too large (413)."""

    default_code = "invalid"


class Unauthorized(HitlError):
    """No credentials or bad ones (401): set HITL_TOKEN or pass ``token=``."""

    default_code = "unauthorized"


class Forbidden(HitlError):
    """The credentials may not do this (403), such as a responder token asking."""

    default_code = "forbidden"


class NotFound(HitlError):
    """No such interaction, or one the caller may not see (404)."""

    default_code = "not_found"


class Conflict(HitlError):
    """Already answered, or an idempotency key reused for another question (409)."""

    default_code = "conflict"


class Expired(HitlError):
    """The deadline passed with no answer (410, or the outcome of a question)."""

    default_code = "expired"


class Cancelled(HitlError):
    """The question was withdrawn (410, or the outcome of a question); ``reason`` says why."""

    default_code = "cancelled"

    @property
    def reason(self) -> str:
        """The reason recorded on the server, such as ``"agent_cancelled"``, or ""."""
        if self.interaction is not None and self.interaction.result is not None:
            return self.interaction.result.reason
        return ""


class InvalidAnswer(HitlError):
    """A value that is not a valid answer for the question's type (422)."""

    default_code = "invalid_value"


class RateLimited(HitlError):
    """Too many requests (429); ``retry_after`` is the server's hint in seconds, if any."""

    default_code = "rate_limited"

    def __init__(self, message: str, *, retry_after: float | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.retry_after = retry_after


class Unavailable(HitlError):
    """The server is not ready or shutting down (503), or a gateway in front of it failed."""

    default_code = "unavailable"


class Unreachable(HitlError):
    """No complete response: the server is down, restarting, or the connection broke."""

    default_code = "unreachable"


# Each server error code to its class (the table mirrors the server's).
_BY_CODE: dict[str, type[HitlError]] = {
    "invalid": InvalidRequest,
    "too_large": InvalidRequest,
    "unauthorized": Unauthorized,
    "forbidden": Forbidden,
    "not_found": NotFound,
    "conflict": Conflict,
    "expired": Expired,
    "cancelled": Cancelled,
    "invalid_value": InvalidAnswer,
    "rate_limited": RateLimited,
    "unavailable": Unavailable,
}

# Statuses for responses without a hitl error body (a proxy's page, say).
_BY_STATUS: dict[int, type[HitlError]] = {
    400: InvalidRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: InvalidRequest,
    422: InvalidAnswer,
    429: RateLimited,
    502: Unavailable,
    503: Unavailable,
    504: Unavailable,
}


def error_from_response(status: int, body: bytes, retry_after: str | None = None) -> HitlError:
    """Returns the exception for a failed response: the server's
    ``{"error": {"code", "message"}}`` as the class of its code, or, for any
    other body, the class of its status with the start of the body."""
    code: str | None = None
    message = ""
    try:
        doc = json.loads(body)
        err = doc.get("error") if isinstance(doc, dict) else None
        if isinstance(err, dict) and isinstance(err.get("code"), str) and err["code"]:
            code = err["code"]
            message = str(err.get("message", ""))
    except ValueError:
        pass
    if code is None:
        cls = _BY_STATUS.get(status, HitlError)
        snippet = body[:200].decode("utf-8", "replace").strip()
        message = f"HTTP {status}" + (f": {snippet}" if snippet else "")
        code = cls.default_code if cls is not HitlError else "unexpected_response"
    else:
        cls = _BY_CODE.get(code, HitlError)
    if cls is RateLimited:
        seconds = None
        try:
            seconds = float(retry_after) if retry_after else None
        except ValueError:
            pass
        return RateLimited(message, code=code, status=status, retry_after=seconds)
    return cls(message, code=code, status=status)
