"""A server with API tokens: the agent's token asks, a responder's answers,
and the server's refusals come through as Unauthorized and Forbidden."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from hitlserver import Server, fresh, make_token
from person import Person

import hitl


@dataclass
class AuthServer:
    server: Server
    agent_token: str
    responder_token: str


@pytest.fixture(scope="module")
def auth(hitl_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    db = tmp_path_factory.mktemp("auth") / "hitl.db"
    agent = make_token(hitl_bin, db, "build-bot", "agent")
    responder = make_token(hitl_bin, db, "pager", "responder")
    srv = Server(hitl_bin, db)
    yield AuthServer(srv, agent, responder)
    srv.stop()


def test_token_asks_and_responder_answers(auth: AuthServer) -> None:
    agent = hitl.Client(auth.server.url, token=auth.agent_token)
    q = fresh("Rotate the keys?")
    Person(auth.server, auth.responder_token).answer(q, "approve")
    got = agent.ask({"interaction_type": "approval", "question": q})
    assert got.value is True
    assert got.created_by == "build-bot"
    assert got.result is not None and got.result.responded_by == "pager"


def test_token_from_environment(auth: AuthServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HITL_URL", auth.server.url)
    monkeypatch.setenv("HITL_TOKEN", auth.agent_token)
    q = fresh("From the environment?")
    Person(auth.server, auth.responder_token).answer(q, "yes")
    assert hitl.Client().ask_text(q) == "yes"


def test_no_or_bad_token(auth: AuthServer) -> None:
    for token in ("", "hitl_not-a-real-token"):
        with pytest.raises(hitl.Unauthorized) as exc:
            hitl.Client(auth.server.url, token=token).ask_text(fresh("Let me in?"))
        assert (exc.value.status, exc.value.code) == (401, "unauthorized")


def test_forbidden(auth: AuthServer) -> None:
    responder = hitl.Client(auth.server.url, token=auth.responder_token)
    with pytest.raises(hitl.Forbidden) as exc:
        responder.yes_no(fresh("May a responder ask?"))
    assert exc.value.status == 403

    created = hitl.Client(auth.server.url, token=auth.agent_token).create({"question": fresh("May an agent answer?")})
    with pytest.raises(hitl.Forbidden) as answer:
        hitl.Client(auth.server.url, token=auth.agent_token).respond(created.id, "self-approved")
    assert "agents cannot answer" in answer.value.message
