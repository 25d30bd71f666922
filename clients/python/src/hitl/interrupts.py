"""LangGraph's interrupts, answered by a person through hitl.

Two conventions say what a node's ``interrupt(value)`` asks and what the
graph resumes with (docs/contracts/agent-inbox.md): Agent Inbox's
``HumanInterrupt`` (or a list of them), resumed with a list of
``HumanResponse``; and LangChain v1's ``HumanInTheLoopMiddleware`` request
(``action_requests``, ``review_configs``), resumed with ``{"decisions":
[...]}``. :func:`answer_interrupt` asks hitl for each action and returns the
resume value, for ``Command(resume=...)``. The shapes are plain dicts: this
module needs neither langgraph nor langchain.

A review that gets no answer (expired, cancelled, the server unreachable)
resumes with "do not run it" and the reason: a ``response`` (or ``ignore``)
for a HumanInterrupt, a ``reject`` for the middleware; when the interrupt
allows neither, the error is raised.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence, cast

from ._action import ActionDecision, Decision
from ._errors import HitlError

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._async import AsyncClient
    from ._client import Client
    from ._questions import AskOptions

__all__ = ["Review", "reviews_of", "resume_value", "failed_value", "answer_interrupt", "answer_interrupt_async"]


@dataclass(frozen=True)
class Review:
    """One action an interrupt asks about, as ``review_action`` takes it."""

    name: str
    args: dict[str, Any]
    decisions: tuple[Decision, ...]
    context: str = ""
    args_schema: Mapping[str, Any] | None = None
    #: The suffix of the idempotency key ("" for a lone HumanInterrupt, "#<i>" otherwise).
    key_suffix: str = ""
    #: What the interrupt allows when there is no answer: the value to resume with, or None to raise.
    fallback: Any = field(default=None, compare=False)


def reviews_of(value: Any) -> list[Review]:
    """Returns the reviews an interrupt's value asks for, in order. Raises
    TypeError for a value that is neither shape."""
    if isinstance(value, Mapping) and "action_requests" in value and "review_configs" in value:
        configs = {c["action_name"]: c for c in value["review_configs"]}
        out = []
        for i, a in enumerate(value["action_requests"]):
            c = configs.get(a["name"])
            if c is None:
                raise TypeError(f"answer_interrupt: no review config for action {a['name']!r}")
            out.append(Review(a["name"], dict(a.get("args") or {}), tuple(c["allowed_decisions"]), a.get("description") or "",
                              c.get("args_schema"), f"#{i}"))
        return out
    items = value if isinstance(value, list) else [value]
    if not items or not all(_is_human_interrupt(x) for x in items):
        raise TypeError("answer_interrupt: the value is neither a HumanInterrupt (or a list of them) nor a HITL middleware request")
    out = []
    for i, hi in enumerate(items):
        c = hi["config"]
        decisions = tuple(d for d, on in (("approve", c.get("allow_accept")), ("edit", c.get("allow_edit")),
                                          ("reject", c.get("allow_ignore")), ("respond", c.get("allow_respond"))) if on)
        out.append(Review(hi["action_request"]["action"], dict(hi["action_request"].get("args") or {}),
                          cast("tuple[Decision, ...]", decisions), hi.get("description") or "", None,
                          f"#{i}" if isinstance(value, list) else ""))
    return out


def resume_value(value: Any, decisions: Sequence[ActionDecision[dict[str, Any]] | str]) -> Any:
    """Returns what the graph resumes with, given each review's decision
    in order; a str in place of a decision is the reason a review got no
    answer (see :func:`failed_value`)."""
    if isinstance(value, Mapping) and "action_requests" in value:
        out: list[dict[str, Any]] = []
        for a, d in zip(value["action_requests"], decisions):
            if isinstance(d, str):
                out.append({"type": "reject", "message": f"Not run: {a['name']} was not reviewed ({d})."})
            elif d.decision == "approve":
                out.append({"type": "approve"})
            elif d.decision == "edit":
                out.append({"type": "edit", "edited_action": {"name": a["name"], "args": d.args}})
            else:
                out.append({"type": "reject", "message": d.message} if d.message else {"type": "reject"})
        return {"decisions": out}
    items = value if isinstance(value, list) else [value]
    responses: list[dict[str, Any]] = []
    for hi, d in zip(items, decisions):
        request = hi["action_request"]
        if isinstance(d, str):
            responses.append(failed_value(hi, d))
        elif d.decision == "approve":
            responses.append({"type": "accept", "args": {"action": request["action"], "args": request.get("args") or {}}})
        elif d.decision == "edit":
            responses.append({"type": "edit", "args": {"action": request["action"], "args": d.args}})
        elif d.decision == "respond":
            responses.append({"type": "response", "args": d.message})
        else:
            responses.append({"type": "ignore", "args": None})
    return responses


def failed_value(interrupt: Mapping[str, Any], reason: str) -> dict[str, Any]:
    """Returns the HumanResponse for a HumanInterrupt nobody answered: a
    response saying so when the interrupt allows one, else ignore; raises
    HitlError when it allows neither (nothing it allows means "do not run")."""
    c = interrupt["config"]
    if c.get("allow_respond"):
        return {"type": "response", "args": f"Not done: {interrupt['action_request']['action']} was not reviewed ({reason})."}
    if c.get("allow_ignore"):
        return {"type": "ignore", "args": None}
    raise HitlError(reason, code="no_answer")


def _can_refuse(value: Any, index: int) -> bool:
    """Whether the index-th review of value can resume with "do not run it"."""
    if isinstance(value, Mapping) and "action_requests" in value:
        name = value["action_requests"][index]["name"]
        return any(c["action_name"] == name and "reject" in c["allowed_decisions"] for c in value["review_configs"])
    hi = (value if isinstance(value, list) else [value])[index]
    return bool(hi["config"].get("allow_respond") or hi["config"].get("allow_ignore"))


def answer_interrupt(client: Client, value: Any, *, key: str = "", **options: Unpack[AskOptions]) -> Any:
    """Asks hitl about each action of an interrupt's value, one after the
    other, and returns the value to resume the graph with. ``key`` (such as
    the interrupt's id) makes the questions' idempotency keys, so a process
    that restarts and asks again waits on the same questions."""
    decisions: list[ActionDecision[dict[str, Any]] | str] = []
    for i, r in enumerate(reviews_of(value)):
        try:
            decisions.append(client.review_action(r.name, r.args, decisions=r.decisions, context=r.context, args_schema=r.args_schema,
                                                  **_options(options, key, r)))
        except HitlError as e:
            if not _can_refuse(value, i):
                raise
            decisions.append(e.message)
    return resume_value(value, decisions)


async def answer_interrupt_async(client: AsyncClient, value: Any, *, key: str = "", **options: Unpack[AskOptions]) -> Any:
    """:func:`answer_interrupt` for asyncio: the actions are asked at once."""
    import asyncio

    async def one(i: int, r: Review) -> ActionDecision[dict[str, Any]] | str:
        try:
            return await client.review_action(r.name, r.args, decisions=r.decisions, context=r.context, args_schema=r.args_schema,
                                              **_options(options, key, r))
        except HitlError as e:
            if not _can_refuse(value, i):
                raise
            return e.message

    return resume_value(value, await asyncio.gather(*(one(i, r) for i, r in enumerate(reviews_of(value)))))


def _options(options: Mapping[str, Any], key: str, r: Review) -> Any:
    out = {k: v for k, v in options.items() if k != "context"}
    if key:
        out["idempotency_key"] = key + r.key_suffix
    return out


def _is_human_interrupt(v: Any) -> bool:
    return (isinstance(v, Mapping) and isinstance(v.get("action_request"), Mapping)
            and isinstance(v["action_request"].get("action"), str) and isinstance(v.get("config"), Mapping))
