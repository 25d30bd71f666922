"""JSON Schema for a form from a dataclass or TypedDict, and the answer
decoded back into it."""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime as dt
import enum
import types
import typing
from typing import Any, Union

from ._types import parse_time

__all__ = ["schema_for", "decode", "is_form_type"]

_NONE = type(None)
_SCALARS: dict[type, str] = {str: "string", bool: "boolean", int: "integer", float: "number"}


def is_form_type(tp: Any) -> bool:
    """Reports whether tp is a dataclass or TypedDict class, which ``form``
    derives a schema from."""
    return isinstance(tp, type) and (dataclasses.is_dataclass(tp) or typing.is_typeddict(tp))


def schema_for(tp: type) -> dict[str, Any]:
    """Returns the JSON Schema (draft 2020-12) of a dataclass or TypedDict:
    an object whose properties are its fields, required unless they have a
    default (dataclass), are ``NotRequired``/``total=False`` (TypedDict) or
    are Optional, and no other properties. A field's
    ``metadata={"description": ..., "title": ...}`` is copied into the
    schema. Raises TypeError for a field type with no JSON form."""
    if not is_form_type(tp):
        raise TypeError(f"form: {tp!r} is not a dataclass or TypedDict class")
    return _object_schema(tp, stack=())


def _object_schema(tp: type, stack: tuple[type, ...]) -> dict[str, Any]:
    if tp in stack:
        raise TypeError(f"form: {tp.__name__} contains itself; recursive forms are not supported")
    stack = stack + (tp,)
    hints = typing.get_type_hints(tp)
    props: dict[str, Any] = {}
    required: list[str] = []
    if dataclasses.is_dataclass(tp):
        for f in dataclasses.fields(tp):
            hint = hints[f.name]
            s = _field_schema(f"{tp.__name__}.{f.name}", hint, stack)
            for k in ("title", "description"):
                if k in f.metadata:
                    s[k] = str(f.metadata[k])
            has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            if f.default is not dataclasses.MISSING and _is_json(f.default) and f.default is not None:
                s["default"] = f.default.value if isinstance(f.default, enum.Enum) else f.default
            if not has_default and not _is_optional(hint):
                required.append(f.name)
            props[f.name] = s
    else:
        req_keys = getattr(tp, "__required_keys__", frozenset(hints))
        for name, hint in hints.items():
            props[name] = _field_schema(f"{tp.__name__}.{name}", hint, stack)
            if name in req_keys and not _is_optional(hint):
                required.append(name)
    out: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        out["required"] = required
    out["additionalProperties"] = False
    return out


def _field_schema(where: str, hint: Any, stack: tuple[type, ...]) -> dict[str, Any]:
    hint = _strip(hint)
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is Any:
        return {}
    if _is_optional(hint):
        rest = [a for a in args if a is not _NONE]
        return _field_schema(where, rest[0] if len(rest) == 1 else Union[tuple(rest)], stack)
    if isinstance(hint, type):
        if issubclass(hint, enum.Enum):
            return _enum([m.value for m in hint])
        for py, js in _SCALARS.items():
            if hint is py:
                return {"type": js}
        if hint is dt.datetime:
            return {"type": "string", "format": "date-time"}
        if hint is dt.date:
            return {"type": "string", "format": "date"}
        if is_form_type(hint):
            return _object_schema(hint, stack)
    if origin is typing.Literal:
        return _enum(list(args))
    if origin in (list, tuple, set, frozenset) or _is_abc(origin, "Sequence"):
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            raise TypeError(f"form: {where}: only tuple[X, ...] has a JSON form, not {hint!r}")
        item = args[0] if args else Any
        s: dict[str, Any] = {"type": "array", "items": _field_schema(where + "[]", item, stack)}
        if origin in (set, frozenset):
            s["uniqueItems"] = True
        return s
    if origin is dict or _is_abc(origin, "Mapping"):
        if args and _strip(args[0]) is not str:
            raise TypeError(f"form: {where}: JSON object keys are strings, not {args[0]!r}")
        return {"type": "object", "additionalProperties": _field_schema(where + "{}", args[1] if args else Any, stack)}
    if origin in (Union, types.UnionType):
        return {"anyOf": [_field_schema(where, a, stack) for a in args]}
    raise TypeError(f"form: {where}: no JSON Schema for {hint!r}")


def _enum(values: list[Any]) -> dict[str, Any]:
    """An enum, with the values' JSON type when they share one (forms need it)."""
    out: dict[str, Any] = {"enum": values}
    kinds = {_SCALARS.get(type(v)) for v in values}
    if len(kinds) == 1 and None not in kinds:
        out["type"] = kinds.pop()
    return out


def decode(tp: Any, value: Any) -> Any:
    """Converts a form answer (JSON) into tp: dataclasses built field by
    field, enums by value, dates parsed, lists and dicts element by element.
    The server has validated it against schema_for(tp), so a mismatch means
    the schema and the class disagree; it raises ValueError saying where."""
    return _decode("answer", tp, value)


def _decode(where: str, hint: Any, value: Any) -> Any:
    hint = _strip(hint)
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is Any:
        return value
    if _is_optional(hint):
        if value is None:
            return None
        rest = [a for a in args if a is not _NONE]
        return _decode(where, rest[0] if len(rest) == 1 else Union[tuple(rest)], value)
    if isinstance(hint, type):
        if dataclasses.is_dataclass(hint):
            return _decode_dataclass(where, hint, value)
        if typing.is_typeddict(hint):
            hints = typing.get_type_hints(hint)
            obj = _expect(where, value, dict)
            return {k: _decode(f"{where}.{k}", hints.get(k, Any), v) for k, v in obj.items()}
        if issubclass(hint, enum.Enum):
            return hint(value)
        if hint is dt.datetime:
            t = parse_time(value)
            if t is None:
                raise ValueError(f"{where}: {value!r} is not an RFC 3339 date-time")
            return t
        if hint is dt.date:
            return dt.date.fromisoformat(_expect(where, value, str))
        if hint is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if hint in _SCALARS:
            return _expect(where, value, hint)
    if origin is typing.Literal:
        if value not in args:
            raise ValueError(f"{where}: {value!r} is not one of {list(args)!r}")
        return value
    if origin in (list, tuple, set, frozenset) or _is_abc(origin, "Sequence"):
        item = args[0] if args else Any
        items = [_decode(f"{where}[{i}]", item, v) for i, v in enumerate(_expect(where, value, list))]
        return origin(items) if origin in (tuple, set, frozenset) else items
    if origin is dict or _is_abc(origin, "Mapping"):
        item = args[1] if args else Any
        return {k: _decode(f"{where}.{k}", item, v) for k, v in _expect(where, value, dict).items()}
    if origin in (Union, types.UnionType):
        return value
    raise ValueError(f"{where}: cannot decode into {hint!r}")


def _decode_dataclass(where: str, tp: type, value: Any) -> Any:
    obj = _expect(where, value, dict)
    hints = typing.get_type_hints(tp)
    kwargs = {}
    for f in dataclasses.fields(tp):
        if f.name in obj:
            kwargs[f.name] = _decode(f"{where}.{f.name}", hints[f.name], obj[f.name])
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            if not _is_optional(hints[f.name]):
                raise ValueError(f"{where}: field {f.name!r} is missing")
            kwargs[f.name] = None
    return tp(**kwargs)


def _expect(where: str, value: Any, tp: type) -> Any:
    if not isinstance(value, tp) or (tp is int and isinstance(value, bool)):
        raise ValueError(f"{where}: expected {tp.__name__}, got {type(value).__name__}")
    return value


def _strip(hint: Any) -> Any:
    """Removes Annotated, Required and NotRequired wrappers."""
    while True:
        origin = typing.get_origin(hint)
        if origin is typing.Annotated:
            hint = typing.get_args(hint)[0]
        elif origin is not None and getattr(origin, "_name", "") in ("Required", "NotRequired"):
            hint = typing.get_args(hint)[0]
        else:
            return hint


def _is_optional(hint: Any) -> bool:
    hint = _strip(hint)
    return typing.get_origin(hint) in (Union, types.UnionType) and _NONE in typing.get_args(hint)


def _is_abc(origin: Any, name: str) -> bool:
    return origin is getattr(collections.abc, name)


def _is_json(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool, enum.Enum))

