"""An agent that stops waiting takes its question back: Ctrl-C, a cancelled
task, even while the create's reply is still on its way."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hitlserver import PATIENCE, Server, fresh
from person import Person
from proxy import HoldingProxy

import hitl

SRC = str(Path(__file__).resolve().parents[1] / "src")

# An agent script that asks and blocks; the test presses Ctrl-C.
AGENT = """
import sys
import hitl
print(hitl.Client(sys.argv[1]).ask_text(sys.argv[2]))
"""


@pytest.fixture
def proxy(server: Server) -> Iterator[HoldingProxy]:
    p = HoldingProxy(server.url)
    yield p
    p.close()


def interrupt(url: str, question: str, wait_until_asked: object) -> subprocess.CompletedProcess[str]:
    """Runs the agent script against url, sends it SIGINT once
    wait_until_asked() returns, and returns how it ended."""
    proc = subprocess.Popen(
        [sys.executable, "-c", AGENT, url, question],
        env={**os.environ, "PYTHONPATH": SRC}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        wait_until_asked()  # type: ignore[operator]
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=PATIENCE)
    finally:
        proc.kill()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def assert_withdrawn(server: Server, interaction_id: str) -> None:
    got = server.interaction(interaction_id)
    assert got["status"] == "cancelled", got
    assert got["result"]["reason"] == hitl.CANCEL_REASON


def test_ctrl_c_while_waiting(server: Server, person: Person) -> None:
    q = fresh("Interrupted?")
    asked = person.asked(q)
    done = interrupt(server.url, q, asked.wait)
    assert done.returncode == -signal.SIGINT, done.stderr
    assert "KeyboardInterrupt" in done.stderr
    assert_withdrawn(server, asked.id)


def test_ctrl_c_while_creating(server: Server, proxy: HoldingProxy) -> None:
    q = fresh("Interrupted before the reply?")
    done = interrupt(proxy.url, q, proxy.wait_forwarded)
    assert done.returncode == -signal.SIGINT, done.stderr
    assert_withdrawn(server, proxy.held["interaction_id"])


def test_task_cancel_while_waiting(aclient: hitl.AsyncClient, person: Person, server: Server) -> None:
    q = fresh("Task cancelled?")
    asked = person.asked(q)

    async def main() -> None:
        task = asyncio.create_task(aclient.yes_no(q))
        await asyncio.to_thread(asked.wait)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert_withdrawn(server, asked.id)


def test_task_cancel_while_creating(proxy: HoldingProxy, server: Server) -> None:
    aclient = hitl.AsyncClient(proxy.url)

    async def main() -> None:
        task = asyncio.create_task(aclient.ask_text(fresh("Task cancelled before the reply?")))
        await asyncio.to_thread(proxy.wait_forwarded)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert_withdrawn(server, proxy.held["interaction_id"])
