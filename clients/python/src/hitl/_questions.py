"""The typed questions, built once for both clients: each is the request to
send and the function that turns the answered interaction into the value
the caller gets. A new interaction type is one more builder here and one
method on each client."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Generic, Mapping, Sequence, TypedDict, TypeVar, Union

from ._errors import Cancelled, Expired, HitlError, InvalidAnswer
from ._schema import decode, is_form_type, schema_for
from ._types import Interaction, Option

__all__ = ["AskOptions", "Question", "ChoiceSpec", "CANCEL_REASON"]

T = TypeVar("T")

#: The reason given to the server when the caller stops waiting (Ctrl-C,
#: a cancelled task): the same as the Go client's.
CANCEL_REASON = "agent_cancelled"

#: A choice: a label (its key is derived by the server: lower case, runs of
#: anything but letters and digits become "_", so "EU West" is "eu_west"),
#: an Option, or a mapping with "key", "label" and "description".
ChoiceSpec = Union[str, Option, Mapping[str, str]]


class AskOptions(TypedDict, total=False):
    """What every helper accepts besides the question, as keyword arguments."""

    #: Supporting text shown with the question (Markdown).
    context: str
    #: Seconds (or a timedelta) the person has to answer; the server's
    #: default is one hour. ``deadline`` wins.
    timeout: float | dt.timedelta
    #: An absolute, timezone-aware deadline.
    deadline: dt.datetime
    #: Pre-fills the person's answer, in the helper's type (a str for
    #: ask_text, a bool for yes_no, a key or label for choice, a list for
    #: choices, a dict or instance for form).
    default: Any
    #: Answer with ``default`` when the deadline passes instead of raising Expired.
    default_on_timeout: bool
    #: Makes retries safe: asking again with the same key and question waits
    #: on the same interaction (and gets its answer if it has one); the same
    #: key with another question raises Conflict. Default: a new random key
    #: per call.
    idempotency_key: str
    #: The agent asking, shown to the person (default: the client's ``agent``).
    source_agent: str
    #: Groups questions from one agent session.
    session_id: str
    #: Free-form provenance stored with the interaction.
    metadata: Mapping[str, Any]
    #: Who may answer: ``{"users": [...], "groups": [...]}``; default anyone.
    targets: Mapping[str, Sequence[str]]
    #: Per-question notification settings, such as ``{"slack": False}``.
    notify: Mapping[str, Any]


_OPTION_NAMES = frozenset(AskOptions.__annotations__)


@dataclass(frozen=True)
class Question(Generic[T]):
    """A question ready to ask: the request body and how to read the answer."""

    request: dict[str, Any]
    read: Callable[[Interaction], T]


def new_key() -> str:
    """Returns a fresh idempotency key for one call."""
    return f"ask-{uuid.uuid4()}"


def outcome(interaction: Interaction) -> Interaction:
    """Returns an answered interaction, and raises Expired or Cancelled for
    one that ended otherwise (as Go's ask.Outcome)."""
    reason = interaction.result.reason if interaction.result else ""
    if interaction.status == "answered":
        return interaction
    if interaction.status == "expired":
        deadline = interaction.deadline.isoformat() if interaction.deadline else "its deadline"
        raise Expired(
            f"timeout waiting for feedback: nobody answered interaction {interaction.id} before its deadline ({deadline})",
            interaction=interaction,
        )
    if interaction.status == "cancelled":
        raise Cancelled(
            f"interaction {interaction.id} was cancelled: {reason or 'no reason given'}",
            interaction=interaction,
        )
    raise HitlError(f"interaction {interaction.id} is still {interaction.status}", code="conflict", interaction=interaction)


def build(kind: str, question: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """Returns the create request for a question of type kind with the
    helper's keyword options (AskOptions)."""
    unknown = set(options) - _OPTION_NAMES
    if unknown:
        raise TypeError(f"unexpected keyword argument(s): {', '.join(sorted(unknown))}")
    req: dict[str, Any] = {"interaction_type": kind, "question": question}
    if options.get("context"):
        req["context"] = options["context"]
    timeout = options.get("timeout")
    if timeout is not None:
        req["timeout"] = timeout.total_seconds() if isinstance(timeout, dt.timedelta) else float(timeout)
    deadline = options.get("deadline")
    if deadline is not None:
        if deadline.tzinfo is None:
            raise ValueError("deadline must be timezone-aware (use datetime.now(timezone.utc) + ...)")
        req["deadline"] = deadline.isoformat()
    if options.get("default") is not None:
        req["default_response"] = _jsonable(options["default"])
    if options.get("default_on_timeout"):
        req["on_timeout"] = "default"
    for name in ("idempotency_key", "source_agent", "session_id"):
        if options.get(name):
            req[name] = options[name]
    for name in ("metadata", "targets", "notify"):
        if options.get(name) is not None:
            req[name] = _jsonable(options[name])
    return req


def text(question: str, opts: Mapping[str, Any]) -> Question[str]:
    """A free-text question; the answer is the person's text."""
    return Question(build("free_text", question, opts), lambda i: _typed(i, str, "a string"))


def yes_no(question: str, yes: str | None, no: str | None, opts: Mapping[str, Any]) -> Question[bool]:
    """An approval; the answer is True for approve. The buttons read yes and no."""
    req = build("approval", question, opts)
    if yes or no:
        req["options"] = [{"key": "approve", "label": yes or "Approve"}, {"key": "reject", "label": no or "Reject"}]
    return Question(req, lambda i: _typed(i, bool, "true or false"))


def choice(question: str, choices: Sequence[ChoiceSpec], opts: Mapping[str, Any]) -> Question[str]:
    """One of several; the answer is the chosen option's key."""
    req = build("single_choice", question, opts)
    req["options"] = _options(choices)
    return Question(req, lambda i: _typed(i, str, "an option key"))


def choices(question: str, choices: Sequence[ChoiceSpec], opts: Mapping[str, Any]) -> Question[list[str]]:
    """Any number of several; the answer is the chosen keys, in the order given."""
    req = build("multi_choice", question, opts)
    req["options"] = _options(choices)

    def read(i: Interaction) -> list[str]:
        keys: list[Any] = _typed(i, list, "a list of option keys")
        if not all(isinstance(k, str) for k in keys):
            raise InvalidAnswer(f"interaction {i.id}: expected a list of option keys", interaction=i)
        return keys

    return Question(req, read)


def form(question: str, schema: Any, opts: Mapping[str, Any]) -> Question[Any]:
    """A form: schema is a JSON Schema mapping (the answer is a dict) or a
    dataclass or TypedDict class (its schema is derived and the answer
    decoded into it)."""
    req = build("form", question, opts)
    if is_form_type(schema):
        req["form_schema"] = schema_for(schema)

        def read(i: Interaction) -> Any:
            try:
                return decode(schema, _typed(i, dict, "an object"))
            except (ValueError, TypeError) as e:
                raise InvalidAnswer(f"interaction {i.id}: the answer does not fit {schema.__name__}: {e}", interaction=i) from None

        return Question(req, read)
    if not isinstance(schema, Mapping):
        raise TypeError(f"form: schema must be a JSON Schema mapping or a dataclass or TypedDict class, not {type(schema).__name__}")
    req["form_schema"] = _jsonable(schema)
    return Question(req, lambda i: _typed(i, dict, "an object"))


def handoff(message: str, opts: Mapping[str, Any]) -> dict[str, Any]:
    """The request that hands a conversation to a person: the agent's
    message, and the options (context, session_id, timeout, targets…).
    default and default_on_timeout shape an answer, and a reply is the
    person's own: they are refused."""
    for name in ("default", "default_on_timeout"):
        if name in opts:
            raise TypeError(f"handoff takes no {name}: the reply is the person's own")
    return build("handoff", message, opts)


def reply(interaction: Interaction) -> str:
    """The person's reply to an ended handoff; raises Expired or Cancelled
    when it ended without one."""
    return _typed(outcome(interaction), str, "the reply (a string)")


def _options(choices: Sequence[ChoiceSpec]) -> list[Any]:
    if isinstance(choices, (str, bytes)):
        raise TypeError("choices must be a sequence of labels, Options or mappings, not a string")
    out: list[Any] = []
    for c in choices:
        if isinstance(c, Option):
            out.append(c.to_json())
        elif isinstance(c, Mapping):
            out.append(dict(c))
        else:
            out.append(str(c))
    return out


def _typed(i: Interaction, tp: type[T], what: str) -> T:
    value = i.value
    if not isinstance(value, tp) or (tp is not bool and isinstance(value, bool)):
        raise InvalidAnswer(f"interaction {i.id}: expected {what} as the answer, got {type(value).__name__}", interaction=i)
    return value


def _jsonable(value: Any) -> Any:
    """Turns dataclass instances, enums, dates and tuples into JSON values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # A None field is left out: absent, not null, as the derived schema has it.
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value) if getattr(value, f.name) is not None}
    if isinstance(value, enum.Enum):
        return _jsonable(value.value)
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    return value
