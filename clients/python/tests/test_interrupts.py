"""hitl.interrupts: LangGraph's interrupt shapes (Agent Inbox's
HumanInterrupt, LangChain v1's HITL middleware request) to reviews and
back, held to the cases the server's and the TypeScript client's tests
share (testdata/agent-inbox.json), and answered by a person on a real
server. The frameworks themselves cannot be installed here (no PyPI): the
shapes are plain dicts."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest
from hitlserver import REPO
from person import Person

import hitl
from hitl.interrupts import answer_interrupt, answer_interrupt_async, resume_value, reviews_of

CASES = json.loads((REPO / "testdata" / "agent-inbox.json").read_text())


def decision_of(answer: Any) -> hitl.ActionDecision[dict[str, Any]]:
    """The decision a person's answer (an action's value) comes back as."""
    if isinstance(answer, str):
        answer = {"decision": answer}
    kind = answer["decision"]
    args = answer.get("args") if kind == "edit" else ({} if kind == "approve" else None)
    return hitl.ActionDecision(kind, args, answer.get("message", ""))


@pytest.mark.parametrize("case", CASES["human_interrupt"], ids=[c["name"] for c in CASES["human_interrupt"]])
def test_human_interrupt_shapes(case: dict[str, Any]) -> None:
    (r,) = reviews_of(case["interrupt"])
    assert r.name == case["interrupt"]["action_request"]["action"] and list(r.decisions) == case["decisions"]
    assert r.context == case["interrupt"].get("description", "")
    assert resume_value(case["interrupt"], [decision_of(case["answer"])]) == [case["response"]]
    listed = [case["interrupt"], case["interrupt"]]
    assert [x.key_suffix for x in reviews_of(listed)] == ["#0", "#1"]
    assert resume_value(listed, [decision_of(case["answer"])] * 2) == [case["response"]] * 2


@pytest.mark.parametrize("case", CASES["hitl_request"], ids=[c["name"] for c in CASES["hitl_request"]])
def test_hitl_request_shapes(case: dict[str, Any]) -> None:
    assert [list(r.decisions) for r in reviews_of(case["request"])] == case["decisions"]
    assert resume_value(case["request"], [decision_of(a) for a in case["answers"]]) == case["response"]


def test_neither_shape() -> None:
    for value in ({"question": "?"}, [], [{"action_request": {"action": "x"}}], "approve"):
        with pytest.raises(TypeError):
            reviews_of(value)


def answer_in_turn(person: Person, answers: list[tuple[str, Any]]) -> threading.Thread:
    """Answers the questions, one after the other, as they are asked."""

    def run() -> None:
        for text, value in answers:
            person.answer(text, value).result()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


@pytest.mark.parametrize("case", CASES["human_interrupt"], ids=[c["name"] for c in CASES["human_interrupt"]])
def test_answer_human_interrupt(client: hitl.Client, person: Person, case: dict[str, Any]) -> None:
    t = answer_in_turn(person, [(f"Run {case['interrupt']['action_request']['action']}?", case["answer"])])
    assert answer_interrupt(client, case["interrupt"], timeout=30) == [case["response"]]
    t.join()


@pytest.mark.parametrize("case", CASES["hitl_request"], ids=[c["name"] for c in CASES["hitl_request"]])
def test_answer_hitl_request(client: hitl.Client, person: Person, case: dict[str, Any]) -> None:
    actions = case["request"]["action_requests"]
    t = answer_in_turn(person, [(f"Run {a['name']}?", ans) for a, ans in zip(actions, case["answers"])])
    assert answer_interrupt(client, case["request"], key=f"thread-{case['name']}", timeout=30) == case["response"]
    t.join()


def test_no_answer_never_accepts(client: hitl.Client) -> None:
    hi = CASES["human_interrupt"][0]["interrupt"]
    (got,) = answer_interrupt(client, hi, timeout=0.2)
    assert got["type"] == "response" and got["args"].startswith("Not done: send_email was not reviewed (timeout waiting for feedback")
    ignore_only = {**hi, "config": {"allow_accept": True, "allow_edit": False, "allow_respond": False, "allow_ignore": True}}
    assert answer_interrupt(client, ignore_only, timeout=0.2) == [{"type": "ignore", "args": None}]
    accept_only = {**hi, "config": {"allow_accept": True, "allow_edit": False, "allow_respond": False, "allow_ignore": False}}
    with pytest.raises(hitl.Expired):
        answer_interrupt(client, accept_only, timeout=0.2)
    request = CASES["hitl_request"][0]["request"]
    got_mw = answer_interrupt(client, request, timeout=0.2)
    assert [d["type"] for d in got_mw["decisions"]] == ["reject", "reject"]
    assert got_mw["decisions"][1]["message"].startswith("Not run: execute_sql was not reviewed (timeout waiting for feedback")


def test_async(aclient: hitl.AsyncClient, person: Person) -> None:
    case = CASES["human_interrupt"][2]
    person.answer("Run Question?", case["answer"])
    assert asyncio.run(answer_interrupt_async(aclient, [case["interrupt"]])) == [case["response"]]
