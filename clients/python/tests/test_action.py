"""Action review against a real server, sync and async: the person
approves, edits, rejects or responds, and the agent gets the decision with
the arguments to run."""

from __future__ import annotations

import asyncio
import threading
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from hitlserver import PATIENCE, Server, fresh
from person import Person

import hitl

BASH_SCHEMA = {
    "type": "object",
    "properties": {"command": {"type": "string", "minLength": 1}, "timeout": {"type": "integer"}},
    "required": ["command"],
    "additionalProperties": False,
}


@dataclass
class Bash:
    command: str
    timeout: int = 60


def test_approve(client: hitl.Client, person: Person) -> None:
    q = fresh("Run the tests?")
    reply = person.answer(q, {"decision": "approve"})
    got = client.review_action("Bash", {"command": "make test"}, question=q, description="Run the suite")
    assert (got.decision, got.run, got.args, got.message, got.rule_id) == ("approve", True, {"command": "make test"}, "", "")
    message = reply.asked.message
    assert message["interaction_type"] == "action"
    assert message["action"] == {"name": "Bash", "args": {"command": "make test"}, "description": "Run the suite"}
    assert message["decisions"] == ["approve", "edit", "reject", "respond"]
    assert got.interaction is not None and got.interaction.action == message["action"]


def test_edit_with_schema(client: hitl.Client, person: Person, server: Server) -> None:
    q = fresh("Deploy?")
    asked = person.asked(q)
    replies: list[tuple[int, Any]] = []

    def answer() -> None:
        iid = asked.wait()
        for args in ({"command": ""}, {"command": "make deploy-staging", "timeout": 600}):
            replies.append(server.request("POST", f"/api/v1/interactions/{iid}/respond", {"value": {"decision": "edit", "args": args}}))

    t = threading.Thread(target=answer)
    t.start()
    got = client.review_action("Bash", {"command": "make deploy"}, question=q, args_schema=BASH_SCHEMA, timeout=PATIENCE)
    t.join()
    (s1, d1), (s2, _) = replies
    assert s1 == 422 and "command" in d1["error"]["message"], "an edit the schema refuses is not recorded"
    assert s2 == 200
    assert (got.decision, got.run, got.args) == ("edit", True, {"command": "make deploy-staging", "timeout": 600})
    assert got.interaction is not None and got.interaction.result is not None
    assert got.interaction.result.args_diff == (
        {"op": "replace", "path": "/command", "value": "make deploy-staging"},
        {"op": "add", "path": "/timeout", "value": 600},
    )


def test_dataclass_args(client: hitl.Client, person: Person) -> None:
    q = fresh("Typed deploy?")
    reply = person.answer(q, {"decision": "edit", "args": {"command": "make deploy-eu", "timeout": 90}})
    got = client.review_action("Bash", Bash("make deploy"), question=q)
    assert got.decision == "edit" and got.args == Bash("make deploy-eu", 90), "the edit comes back as the proposal's dataclass"
    assert reply.asked.message["args_schema"] == hitl.schema_for(Bash), "its schema is what an edit must meet"
    q = fresh("Typed approve?")
    person.answer(q, "approve")
    proposed = Bash("make check")
    assert client.review_action("Bash", proposed, question=q).args is proposed


@pytest.mark.parametrize(
    "answer,decision,message",
    [
        ({"decision": "reject", "message": "not on a Friday"}, "reject", "not on a Friday"),
        ({"decision": "reject"}, "reject", ""),
        ("deny", "reject", ""),
        ({"decision": "respond", "message": "run make check first"}, "respond", "run make check first"),
    ],
)
def test_not_run(client: hitl.Client, person: Person, answer: Any, decision: str, message: str) -> None:
    q = fresh("Drop the table?")
    person.answer(q, answer)
    got = client.review_action("psql", {"sql": "DROP TABLE users"}, question=q)
    assert (got.decision, got.run, got.args, got.message) == (decision, False, None, message)


def test_decisions_allowed(client: hitl.Client, person: Person, server: Server) -> None:
    q = fresh("Send the mail?")
    asked = person.asked(q)
    refused: list[tuple[int, Any]] = []

    def answer() -> None:
        iid = asked.wait()
        for value in ({"decision": "edit", "args": {"to": "me@example.com"}}, {"decision": "reject"}, {"decision": "reject", "message": "wrong list"}):
            refused.append(server.request("POST", f"/api/v1/interactions/{iid}/respond", {"value": value}))

    t = threading.Thread(target=answer)
    t.start()
    got = client.review_action("send_email", {"to": "ops@example.com"}, question=q, decisions=["approve", "reject"],
                               reject_requires_message=True, timeout=PATIENCE)
    t.join()
    assert (got.decision, got.message) == ("reject", "wrong list")
    (s1, d1), (s2, _), (s3, _) = refused
    assert s1 == 422 and d1["error"]["message"] == "edit is not allowed for this action; allowed: approve, reject"
    assert s2 == 422, "a reject needs its reason"
    assert s3 == 200
    assert asked.message["reject_requires_message"] is True


def test_always_makes_a_rule(server: Server, person: Person) -> None:
    bot = hitl.Client(server.url, agent=f"rule-bot-{uuid.uuid4().hex[:8]}")
    q = fresh("git status?")
    reply = person.answer(q, {"decision": "approve", "always": {"match": {"arg": "command", "prefix": "git status"}, "ttl_seconds": 3600}})
    first = bot.review_action("Bash", {"command": "git status"}, question=q)
    assert first.decision == "approve" and first.rule_id == ""
    assert reply.result()[0] == 200
    # No one is asked: the rule approves at once, and says so.
    second = bot.review_action("Bash", {"command": "git status --short"})
    assert second.decision == "approve" and second.rule_id
    assert second.interaction is not None and second.interaction.result is not None
    assert second.interaction.result.channel == "rule"
    status, rule = server.request("GET", f"/api/v1/rules/{second.rule_id}")
    assert status == 200 and first.interaction is not None and rule["interaction_id"] == first.interaction.id


def test_expired_is_not_a_decision(client: hitl.Client) -> None:
    with pytest.raises(hitl.Expired):
        client.review_action("Bash", {"command": "make deploy"}, timeout=0.2)


def test_async(aclient: hitl.AsyncClient, person: Person) -> None:
    q1, q2 = fresh("Async approve?"), fresh("Async reject?")
    person.answer(q1, "approve")
    person.answer(q2, {"decision": "reject", "message": "later"})

    async def main() -> tuple[hitl.ActionDecision[dict[str, str]], hitl.ActionDecision[Bash]]:
        return await asyncio.gather(
            aclient.review_action("Bash", {"command": "ls"}, question=q1),
            aclient.review_action("Bash", Bash("rm -rf build"), question=q2),
        )

    a, b = asyncio.run(main())
    assert (a.decision, a.args) == ("approve", {"command": "ls"})
    assert (b.decision, b.run, b.message) == ("reject", False, "later")


def test_args_must_be_an_object(client: hitl.Client) -> None:
    with pytest.raises(TypeError):
        client.review_action("Bash", "make deploy")
