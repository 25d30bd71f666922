"""Handing the conversation to a person: the call returns the id at once,
the person's reply comes back through the wait."""

from __future__ import annotations

import asyncio

import pytest
from hitlserver import Server, fresh
from person import Person

import hitl


def test_handoff(client: hitl.Client, person: Person, server: Server) -> None:
    msg = fresh("The customer wants to talk to a person.")
    hid = client.handoff(msg, context="Order **1432**.", session_id="chat-py", timeout=600)
    got = client.get(hid)
    assert got.status == "pending"
    assert got.type == "handoff"
    assert got.session_id == "chat-py"

    reply = person.answer(msg, "Hi, Ana here. I'll take it from here.")
    assert client.wait_reply(hid) == "Hi, Ana here. I'll take it from here."
    assert reply.result()[0] == 200
    # On the stream it is a handoff, not a question.
    assert reply.asked.message["type"] == "hitl:handoff"
    assert reply.asked.message["message"] == msg
    assert reply.asked.message["session_id"] == "chat-py"
    # The existing wait has it too.
    assert client.wait(hid).value == "Hi, Ana here. I'll take it from here."


def test_handoff_cancelled(client: hitl.Client, person: Person) -> None:
    msg = fresh("Over to a person, then withdrawn.")
    hid = client.handoff(msg)
    person.cancel(msg, "the customer left").result()
    with pytest.raises(hitl.Cancelled):
        client.wait_reply(hid)


def test_handoff_refuses_a_default(client: hitl.Client) -> None:
    with pytest.raises(TypeError):
        client.handoff("Over to you", default="ok")


def test_async_handoff(aclient: hitl.AsyncClient, person: Person) -> None:
    msg = fresh("Async: the customer asks for a manager.")

    async def run() -> str:
        hid = await aclient.handoff(msg, session_id="chat-async")
        person.answer(msg, "Manager here.")
        return await aclient.wait_reply(hid)

    assert asyncio.run(run()) == "Manager here."
