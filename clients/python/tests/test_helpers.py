"""Every helper, sync and async, against a real server: the person answers,
the agent gets the typed value."""

from __future__ import annotations

import asyncio
import enum
from dataclasses import dataclass, field
from typing import Literal, TypedDict

import pytest
from hitlserver import Server, fresh
from person import Person

import hitl


class Env(enum.Enum):
    STAGING = "staging"
    PRODUCTION = "production"


@dataclass
class Window:
    start: str
    hours: int


@dataclass
class Release:
    version: str = field(metadata={"description": "Semantic version"})
    env: Env = Env.STAGING
    replicas: int = 1
    notify: bool = False
    tags: list[str] = field(default_factory=list)
    window: Window | None = None


class Ticket(TypedDict):
    title: str
    priority: Literal["low", "high"]


def test_ask_text(client: hitl.Client, person: Person) -> None:
    q = fresh("The one-time code?")
    reply = person.answer(q, "123456")
    got = client.ask_text(q, context="Sent to your phone.", timeout=60)
    assert got == "123456"
    assert reply.result()[0] == 200
    assert reply.asked.message["context"] == "Sent to your phone."


@pytest.mark.parametrize("value,want", [(True, True), ("approve", True), (False, False), ("reject", False)])
def test_yes_no(client: hitl.Client, person: Person, value: object, want: bool) -> None:
    q = fresh("Deploy build 1432?")
    reply = person.answer(q, value)
    got = client.yes_no(q, yes_label="Deploy", no_label="Hold")
    assert got is want
    assert reply.result()[0] == 200
    labels = [o["label"] for o in reply.asked.message["options"]]
    assert labels == ["Deploy", "Hold"]


def test_choice(client: hitl.Client, person: Person) -> None:
    q = fresh("Which region first?")
    reply = person.answer(q, "US East")  # a label: the server maps it to its key
    got = client.choice(q, ["EU West", "US East", hitl.Option("ap", "Asia Pacific", "Tokyo")])
    assert got == "us_east"
    assert [o["key"] for o in reply.asked.message["options"]] == ["eu_west", "us_east", "ap"]


def test_choices(client: hitl.Client, person: Person) -> None:
    q = fresh("Which checks to rerun?")
    person.answer(q, ["lint", "e2e"])
    got = client.choices(q, [{"key": "lint", "label": "Lint"}, "Unit", {"key": "e2e", "label": "End to end"}])
    assert got == ["lint", "e2e"]


def test_form_schema_dict(client: hitl.Client, person: Person) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    q = fresh("How many?")
    person.answer(q, {"n": 3})
    assert client.form(q, schema) == {"n": 3}


def test_form_dataclass(client: hitl.Client, person: Person) -> None:
    q = fresh("Release details?")
    reply = person.answer(
        q, {"version": "1.4.0", "env": "production", "replicas": 3, "tags": ["hotfix"], "window": {"start": "22:00", "hours": 2}}
    )
    got = client.form(q, Release, default=Release(version="1.4.0"))
    assert got == Release("1.4.0", Env.PRODUCTION, 3, False, ["hotfix"], Window("22:00", 2))
    message = reply.asked.message
    assert message["form_schema"] == hitl.schema_for(Release)
    assert message["default_response"] == {"version": "1.4.0", "env": "staging", "replicas": 1, "notify": False, "tags": []}


def test_form_typeddict(client: hitl.Client, person: Person) -> None:
    q = fresh("File a ticket?")
    person.answer(q, {"title": "Disk full", "priority": "high"})
    got = client.form(q, Ticket)
    assert got == {"title": "Disk full", "priority": "high"}


def test_async_helpers(aclient: hitl.AsyncClient, person: Person) -> None:
    qs = [fresh("Async text?"), fresh("Async approve?"), fresh("Async one?"), fresh("Async several?"), fresh("Async form?")]
    for q, value in zip(qs, ["hi", "no", "b", ["a", "b"], {"title": "t", "priority": "low"}]):
        person.answer(q, value)

    async def main() -> tuple[object, ...]:
        # All five wait at once, each on its own long-poll.
        return tuple(
            await asyncio.gather(
                aclient.ask_text(qs[0]),
                aclient.yes_no(qs[1]),
                aclient.choice(qs[2], ["a", "b"]),
                aclient.choices(qs[3], ["a", "b", "c"]),
                aclient.form(qs[4], Ticket),
            )
        )

    assert asyncio.run(main()) == ("hi", False, "b", ["a", "b"], {"title": "t", "priority": "low"})


def test_result_details(client: hitl.Client, person: Person, server: Server) -> None:
    q = fresh("Who answers?")
    person.answer(q, "me")
    got = client.ask({"question": q, "metadata": {"run": 7}, "session_id": "s-1"})
    assert got.status == "answered" and got.value == "me"
    assert got.result is not None and got.result.channel == "api" and got.result.responded_by == "local"
    assert got.source_agent == "pytest" and got.session_id == "s-1" and got.metadata == {"run": 7}
    assert got.idempotency_key.startswith("ask-"), "a key is made per call"
    assert server.interaction(got.id)["status"] == "answered"


def test_list_get_wait(client: hitl.Client, person: Person) -> None:
    q = fresh("Listed?")
    created = client.create({"question": q, "idempotency_key": q})
    page = client.list(status="pending", idempotency_key=q)
    assert [i.id for i in page.interactions] == [created.id]
    assert client.get(created.id).status == "pending"
    pending = client.wait(created.id, timeout=0.2)
    assert pending.status == "pending", "wait with a timeout hands back a pending interaction"
    person.answer(q, "yes")
    assert client.wait(created.id).value == "yes"
