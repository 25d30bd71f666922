"""A server that is down is Unreachable; one that restarts while an agent
waits is ridden out."""

from __future__ import annotations

import asyncio
import socket
import threading
from pathlib import Path

import pytest
from hitlserver import Server, fresh
from person import Person

import hitl


def closed_port_url() -> str:
    """Returns the URL of a local port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_server_down() -> None:
    url = closed_port_url()
    with pytest.raises(hitl.Unreachable) as exc:
        hitl.Client(url).yes_no("Anyone there?")
    assert exc.value.code == "unreachable" and exc.value.status is None
    assert url in exc.value.message
    with pytest.raises(hitl.Unreachable):
        asyncio.run(hitl.AsyncClient(url).ask_text("Anyone there, async?"))
    with pytest.raises(hitl.Unreachable):
        hitl.Client(url).wait("some-id")


def test_bad_url() -> None:
    with pytest.raises(ValueError):
        hitl.Client("127.0.0.1:7878")


def test_restart_while_waiting(hitl_bin: str, tmp_db: Path) -> None:
    first = Server(hitl_bin, tmp_db)
    addr = first.url.removeprefix("http://")
    client = hitl.Client(first.url)
    q = fresh("Still there after a restart?")
    asked = Person(first).asked(q)
    got: list[object] = []
    agent = threading.Thread(target=lambda: got.append(client.ask_text(q)))
    agent.start()
    asked.wait()
    first.stop()  # the agent's long-poll is released; it polls again and fails
    second = Server(hitl_bin, tmp_db, addr=addr)
    try:
        second.request("POST", f"/api/v1/interactions/{asked.id}/respond", {"value": "yes"})
        agent.join(30)
        assert got == ["yes"]
    finally:
        second.stop()
