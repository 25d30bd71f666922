"""Action review: a tool call the agent is about to make, which a person
approves, edits, rejects or answers instead of; the question and the
decision it comes back as, for both clients."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Mapping, Sequence, TypeVar, cast

from ._errors import InvalidAnswer
from ._questions import Question, _jsonable, build
from ._schema import decode, schema_for
from ._types import Interaction

__all__ = ["ActionDecision", "Decision", "DECISIONS", "action"]

A = TypeVar("A")

#: What a person may decide about an action.
Decision = Literal["approve", "edit", "reject", "respond"]

#: The four decisions, in their usual order (what an action allows when
#: it names none).
DECISIONS: tuple[Decision, ...] = ("approve", "edit", "reject", "respond")


@dataclass(frozen=True)
class ActionDecision(Generic[A]):
    """What a person (or a rule) decided about a tool call.

    ``run`` says whether to run it, with ``args``: the proposed arguments on
    approve, the person's on edit (of the proposal's type: a dataclass
    proposal gets a dataclass back). When it is False, ``args`` is None and
    ``message`` is the reason of a reject ("" when none was given) or the
    reply of a respond. ``rule_id`` names the rule that decided without a
    person ("" when a person did).
    """

    decision: Decision
    args: A | None
    message: str = ""
    rule_id: str = ""
    interaction: Interaction | None = field(default=None, repr=False, compare=False)

    @property
    def run(self) -> bool:
        """Whether the tool is to run: approved, or edited."""
        return self.decision in ("approve", "edit")


def action(
    name: str,
    args: A,
    review: Mapping[str, Any],
    opts: Mapping[str, Any],
) -> Question[ActionDecision[A]]:
    """An action review of the tool ``name`` called with ``args`` (a mapping,
    or a dataclass instance whose schema is what an edit must meet unless
    ``review`` gives ``args_schema``). ``review`` holds ``question``,
    ``description``, ``args_schema``, ``decisions`` and
    ``reject_requires_message``; ``opts`` the AskOptions."""
    if not isinstance(args, Mapping) and not (dataclasses.is_dataclass(args) and not isinstance(args, type)):
        raise TypeError(f"review_action: args must be a mapping or a dataclass instance, not {type(args).__name__}")
    req = build("action", review.get("question") or "", opts)
    if not review.get("question"):
        del req["question"]  # the server's default: "Run <name>?"
    call: dict[str, Any] = {"name": name, "args": _jsonable(args)}
    if review.get("description"):
        call["description"] = review["description"]
    req["action"] = call
    schema = review.get("args_schema")
    if schema is None and not isinstance(args, Mapping):
        schema = schema_for(type(args))
    if schema is not None:
        req["args_schema"] = _jsonable(schema)
    if review.get("decisions"):
        req["decisions"] = list(cast(Sequence[str], review["decisions"]))
    if review.get("reject_requires_message"):
        req["reject_requires_message"] = True
    return Question(req, lambda i: _decision(i, args))


def _decision(i: Interaction, proposed: A) -> ActionDecision[A]:
    value = i.value
    kind = value.get("decision") if isinstance(value, dict) else None
    rule_id = i.result.rule_id if i.result is not None else ""
    message = value.get("message") if isinstance(value, dict) else None
    if kind == "approve":
        return ActionDecision("approve", proposed, "", rule_id, i)
    if kind == "edit" and isinstance(value, dict) and isinstance(value.get("args"), dict):
        edited: Any = value["args"]
        if not isinstance(proposed, Mapping):
            try:
                edited = decode(type(proposed), edited)
            except (ValueError, TypeError) as e:
                raise InvalidAnswer(f"interaction {i.id}: the edited args do not fit {type(proposed).__name__}: {e}", interaction=i) from None
        return ActionDecision("edit", cast(A, edited), "", rule_id, i)
    if kind in ("reject", "respond"):
        return ActionDecision(kind, None, message if isinstance(message, str) else "", rule_id, i)
    raise InvalidAnswer(f"interaction {i.id}: expected an action's decision as the answer", interaction=i)
