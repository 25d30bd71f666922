"""Fixtures: one hitl server for the session, a person, and clients."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hitlserver import Server, build_hitl
from person import Person

import hitl


@pytest.fixture(autouse=True)
def no_client_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keeps a developer's own HITL_URL, HITL_TOKEN and HITL_AGENT out of the tests."""
    for name in ("HITL_URL", "HITL_TOKEN", "HITL_AGENT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def hitl_bin(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The hitl binary under test."""
    return build_hitl(tmp_path_factory.mktemp("bin"))


@pytest.fixture(scope="session")
def server(hitl_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server in local mode (no credentials), shared by the session."""
    srv = Server(hitl_bin, tmp_path_factory.mktemp("db") / "hitl.db")
    yield srv
    srv.stop()


@pytest.fixture
def person(server: Server) -> Person:
    """The person who answers on the shared server."""
    return Person(server)


@pytest.fixture
def client(server: Server) -> hitl.Client:
    """A client of the shared server."""
    return hitl.Client(server.url, agent="pytest")


@pytest.fixture
def aclient(server: Server) -> hitl.AsyncClient:
    """An asyncio client of the shared server."""
    return hitl.AsyncClient(server.url, agent="pytest")


@pytest.fixture
def tmp_db(tmp_path: Path) -> Path:
    """A fresh SQLite file for a server of the test's own."""
    return tmp_path / "hitl.db"
