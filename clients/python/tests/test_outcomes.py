"""Questions that end without an answer, and requests the server refuses:
each surfaces as the right exception with the server's code and message."""

from __future__ import annotations

import asyncio
import threading

import pytest
from hitlserver import Server, fresh
from person import Person

import hitl


def test_expired(client: hitl.Client) -> None:
    q = fresh("Anyone?")
    with pytest.raises(hitl.Expired) as exc:
        client.yes_no(q, timeout=0.2)
    e = exc.value
    assert e.code == "expired" and "timeout waiting for feedback" in e.message
    assert e.interaction is not None and e.interaction.status == "expired"


def test_expired_async(aclient: hitl.AsyncClient) -> None:
    with pytest.raises(hitl.Expired):
        asyncio.run(aclient.ask_text(fresh("Anyone, async?"), timeout=0.2))


def test_default_on_timeout(client: hitl.Client) -> None:
    got = client.choice(fresh("Which?"), ["Red", "Blue"], timeout=0.2, default="Blue", default_on_timeout=True)
    assert got == "blue"


def test_cancelled_elsewhere(client: hitl.Client, person: Person) -> None:
    q = fresh("Withdrawn?")
    reply = person.cancel(q, "superseded by build 1433")
    with pytest.raises(hitl.Cancelled) as exc:
        client.yes_no(q)
    assert reply.result()[0] == 200
    assert exc.value.code == "cancelled"
    assert exc.value.reason == "superseded by build 1433"
    assert "superseded by build 1433" in str(exc.value)


def test_rejected_is_false_not_an_error(client: hitl.Client, person: Person) -> None:
    q = fresh("Ship it?")
    person.answer(q, "reject")
    assert client.yes_no(q) is False


def test_invalid_answer(client: hitl.Client, server: Server) -> None:
    created = client.create({"interaction_type": "approval", "question": fresh("Invalid?")})
    with pytest.raises(hitl.InvalidAnswer) as exc:
        client.respond(created.id, "maybe")
    e = exc.value
    assert (e.status, e.code) == (422, "invalid_value")
    assert "approval value must be true or false" in e.message
    assert server.interaction(created.id)["status"] == "pending", "an invalid answer is not recorded"

    form = client.create({"interaction_type": "form", "question": fresh("Form?"),
                          "form_schema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}})
    with pytest.raises(hitl.InvalidAnswer) as exc:
        client.respond(form.id, {"n": "three"})
    assert exc.value.status == 422 and "n" in exc.value.message


def test_refused_requests(client: hitl.Client) -> None:
    with pytest.raises(hitl.InvalidRequest) as exc:
        client.choice(fresh("Pick from nothing?"), [])
    assert (exc.value.status, exc.value.code) == (400, "invalid")
    assert exc.value.message == "single_choice needs at least one option"

    with pytest.raises(hitl.InvalidRequest):
        client.form(fresh("Not an object?"), {"type": "string"})

    with pytest.raises(hitl.NotFound) as nf:
        client.get("no-such-interaction")
    assert (nf.value.status, nf.value.code) == (404, "not_found")

    with pytest.raises(TypeError):
        client.ask_text("typo", timout=3)  # type: ignore[call-arg]


def test_answer_after_the_end(client: hitl.Client) -> None:
    created = client.create({"question": fresh("Answer twice?")})
    client.respond(created.id, "first")
    with pytest.raises(hitl.Conflict) as exc:
        client.respond(created.id, "second")
    assert exc.value.status == 409

    gone = client.create({"question": fresh("Answer late?")})
    client.cancel(gone.id, "changed my mind")
    with pytest.raises(hitl.Cancelled) as late:
        client.respond(gone.id, "too late")
    assert (late.value.status, late.value.code) == (410, "cancelled")


def test_idempotent_retry(client: hitl.Client, person: Person, server: Server) -> None:
    q = fresh("Asked twice?")
    key = "retry-" + q
    seen: list[str] = []
    first = threading.Thread(target=lambda: seen.append(client.ask_text(q, idempotency_key=key)))
    asked = person.asked(q)
    first.start()
    iid = asked.wait()
    # The agent restarts and asks again with the same key: the same question.
    again = client.create({"interaction_type": "free_text", "question": q, "idempotency_key": key, "source_agent": "pytest"})
    assert again.id == iid
    server.request("POST", f"/api/v1/interactions/{iid}/respond", {"value": "once"})
    first.join()
    # And once answered, asking again returns the answer at once.
    assert client.ask_text(q, idempotency_key=key) == "once"
    assert seen == ["once"]
    assert len(client.list(idempotency_key=key).interactions) == 1

    with pytest.raises(hitl.Conflict) as exc:
        client.ask_text(fresh("Another question, same key?"), idempotency_key=key)
    assert exc.value.status == 409 and "idempotency_key" in exc.value.message
