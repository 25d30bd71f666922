"""The JSON Schema a form derives from a dataclass or TypedDict, and the
answer decoded back (no server needed)."""

from __future__ import annotations

import datetime as dt
import enum
from dataclasses import dataclass, field
from typing import Any, Literal, Optional, TypedDict

import pytest

import hitl
from hitl._schema import decode


class Size(enum.Enum):
    S = "s"
    M = "m"


@dataclass
class Inner:
    n: int


@dataclass
class Everything:
    name: str = field(metadata={"title": "Name", "description": "Who"})
    count: int
    ratio: float
    ok: bool
    size: Size
    mode: Literal["fast", "safe"]
    tags: list[str]
    scores: dict[str, float]
    inner: Inner
    when: dt.date
    at: dt.datetime
    anything: Any
    maybe: Optional[int] = None
    level: int = 3


class Partial(TypedDict, total=False):
    note: str


class Ticket(Partial):
    title: str


def test_schema_for_dataclass() -> None:
    s = hitl.schema_for(Everything)
    assert s["type"] == "object" and s["additionalProperties"] is False
    assert s["required"] == ["name", "count", "ratio", "ok", "size", "mode", "tags", "scores", "inner", "when", "at", "anything"]
    p = s["properties"]
    assert p["name"] == {"type": "string", "title": "Name", "description": "Who"}
    assert p["count"] == {"type": "integer"} and p["ratio"] == {"type": "number"} and p["ok"] == {"type": "boolean"}
    assert p["size"] == {"enum": ["s", "m"], "type": "string"}
    assert p["mode"] == {"enum": ["fast", "safe"], "type": "string"}
    assert p["tags"] == {"type": "array", "items": {"type": "string"}}
    assert p["scores"] == {"type": "object", "additionalProperties": {"type": "number"}}
    assert p["inner"] == {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"], "additionalProperties": False}
    assert p["when"] == {"type": "string", "format": "date"}
    assert p["at"] == {"type": "string", "format": "date-time"}
    assert p["anything"] == {}
    assert p["maybe"] == {"type": "integer"}
    assert p["level"] == {"type": "integer", "default": 3}


def test_schema_for_typeddict() -> None:
    s = hitl.schema_for(Ticket)
    assert s["required"] == ["title"]
    assert set(s["properties"]) == {"title", "note"}


def test_unsupported() -> None:
    @dataclass
    class Bad:
        x: complex

    with pytest.raises(TypeError, match="Bad.x"):
        hitl.schema_for(Bad)
    with pytest.raises(TypeError):
        hitl.schema_for(dict)


def test_decode() -> None:
    value = {
        "name": "a", "count": 2, "ratio": 1, "ok": True, "size": "m", "mode": "safe", "tags": ["x"],
        "scores": {"k": 0.5}, "inner": {"n": 7}, "when": "2025-03-01", "at": "2025-03-01T10:00:00.5Z", "anything": [1],
    }
    got = decode(Everything, value)
    assert got == Everything(
        "a", 2, 1.0, True, Size.M, "safe", ["x"], {"k": 0.5}, Inner(7), dt.date(2025, 3, 1),
        dt.datetime(2025, 3, 1, 10, 0, 0, 500000, tzinfo=dt.timezone.utc), [1], None, 3,
    )
    with pytest.raises(ValueError, match=r"answer\.inner\.n"):
        decode(Everything, {**value, "inner": {"n": "seven"}})
