"""What the server returns: interactions, their options and results."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Mapping

__all__ = ["Option", "Result", "Interaction", "Page", "TERMINAL_STATUSES"]

#: The statuses an interaction ends in; ``pending`` is the only other one.
TERMINAL_STATUSES = frozenset({"answered", "expired", "cancelled"})

_RFC3339 = re.compile(
    r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$"
)


def parse_time(value: Any) -> datetime | None:
    """Parses an RFC 3339 time as the server writes it (any number of
    fraction digits, ``Z`` or an offset) into an aware datetime; None for
    anything else. (``datetime.fromisoformat`` before Python 3.11 accepts
    neither ``Z`` nor two fraction digits.)"""
    if not isinstance(value, str):
        return None
    m = _RFC3339.match(value)
    if not m:
        return None
    date, clock, frac, zone = m.groups()
    micro = (frac or "0")[:6].ljust(6, "0")
    t = datetime.fromisoformat(f"{date}T{clock}.{micro}")
    if zone in ("Z", "z"):
        return t.replace(tzinfo=timezone.utc)
    sign = 1 if zone[0] == "+" else -1
    hours, minutes = int(zone[1:3]), int(zone[4:6])
    return t.replace(tzinfo=timezone(sign * timedelta(hours=hours, minutes=minutes)))


@dataclass(frozen=True)
class Option:
    """One choice of a question: the ``key`` an answer refers to and the
    ``label`` the person sees."""

    key: str
    label: str
    description: str = ""

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Option:
        """Builds an option from the server's JSON."""
        return cls(
            key=str(doc.get("key", "")),
            label=str(doc.get("label", "")),
            description=str(doc.get("description") or ""),
        )

    def to_json(self) -> dict[str, str]:
        """Returns the option as the server reads it."""
        out = {"key": self.key, "label": self.label}
        if self.description:
            out["description"] = self.description
        return out


@dataclass(frozen=True)
class Result:
    """How an interaction ended: the answer's ``value`` (JSON: bool, str,
    list or dict by type), who gave it, on which channel, and for a
    cancelled or expired one the ``reason``."""

    value: Any = None
    responded_by: str = ""
    channel: str = ""
    responded_at: datetime | None = None
    timed_out: bool = False
    reason: str = ""
    #: For an action whose arguments were edited: the RFC 6902 patch from
    #: the proposed ones.
    args_diff: tuple[Any, ...] = ()
    #: For an action a rule decided without a person: the rule.
    rule_id: str = ""
    #: For an approved action: its signed receipt (see verify_receipt).
    receipt: str = ""

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Result:
        """Builds a result from the server's JSON."""
        return cls(
            value=doc.get("value"),
            responded_by=str(doc.get("responded_by") or ""),
            channel=str(doc.get("channel") or ""),
            responded_at=parse_time(doc.get("responded_at")),
            timed_out=bool(doc.get("timed_out", False)),
            reason=str(doc.get("reason") or ""),
            args_diff=tuple(doc.get("args_diff") or ()),
            rule_id=str(doc.get("rule_id") or ""),
            receipt=str(doc.get("receipt") or ""),
        )


@dataclass(frozen=True)
class Interaction:
    """One question from an agent to people, as the server returned it.

    ``status`` is ``pending``, then exactly one of ``answered``, ``expired``
    or ``cancelled``; ``result`` is set once it is not pending. ``raw`` keeps
    the whole JSON document, including fields this client does not know.
    """

    id: str
    type: str
    question: str
    status: str
    options: tuple[Option, ...] = ()
    context: str = ""
    form_schema: Mapping[str, Any] | None = None
    #: An action's tool call: ``{"name", "args", "description"}``.
    action: Mapping[str, Any] | None = None
    #: The JSON Schema an action's edited arguments must meet.
    args_schema: Mapping[str, Any] | None = None
    #: The decisions the person may make about an action.
    decisions: tuple[str, ...] = ()
    #: Whether rejecting the action needs a reason.
    reject_requires_message: bool = False
    default_response: Any = None
    timeout: float = 0.0
    deadline: datetime | None = None
    on_timeout: str = "cancel"
    idempotency_key: str = ""
    source_agent: str = ""
    session_id: str = ""
    metadata: Mapping[str, Any] | None = None
    targets: Mapping[str, Any] | None = None
    #: Where the server POSTs the interaction once it ends (signed; see
    #: :func:`hitl.verify_webhook`).
    callback_url: str = ""
    created_by: str = ""
    created_via: str = ""
    created_at: datetime | None = None
    result: Result | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def terminal(self) -> bool:
        """Whether the interaction has ended (answered, expired or cancelled)."""
        return self.status in TERMINAL_STATUSES

    @property
    def value(self) -> Any:
        """The answer's value, or None when there is none."""
        return self.result.value if self.result is not None else None

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Interaction:
        """Builds an interaction from the server's JSON."""
        result = doc.get("result")
        return cls(
            id=str(doc.get("interaction_id", "")),
            type=str(doc.get("interaction_type", "")),
            question=str(doc.get("question", "")),
            status=str(doc.get("status", "")),
            options=tuple(Option.from_json(o) for o in doc.get("options") or ()),
            context=str(doc.get("context") or ""),
            form_schema=doc.get("form_schema"),
            action=doc.get("action"),
            args_schema=doc.get("args_schema"),
            decisions=tuple(doc.get("decisions") or ()),
            reject_requires_message=bool(doc.get("reject_requires_message", False)),
            default_response=doc.get("default_response"),
            timeout=float(doc.get("timeout") or 0.0),
            deadline=parse_time(doc.get("deadline")),
            on_timeout=str(doc.get("on_timeout") or "cancel"),
            idempotency_key=str(doc.get("idempotency_key") or ""),
            source_agent=str(doc.get("source_agent") or ""),
            session_id=str(doc.get("session_id") or ""),
            metadata=doc.get("metadata"),
            targets=doc.get("targets"),
            callback_url=str(doc.get("callback_url") or ""),
            created_by=str(doc.get("created_by") or ""),
            created_via=str(doc.get("created_via") or ""),
            created_at=parse_time(doc.get("created_at")),
            result=Result.from_json(result) if isinstance(result, Mapping) else None,
            raw=dict(doc),
        )


@dataclass(frozen=True)
class Page:
    """A page of interactions, newest first; ``next_cursor`` fetches the
    next one (None on the last page)."""

    interactions: tuple[Interaction, ...]
    next_cursor: str | None = None
