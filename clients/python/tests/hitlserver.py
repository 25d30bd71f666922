"""A real hitl server for the tests: the repository's own ``hitl serve``
(HITL_BIN, or built here with ``go build``), on a free port, over a temp
SQLite file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
# How long a test waits for something the server does at once.
PATIENCE = 30.0


def build_hitl(out_dir: Path) -> str:
    """Returns the hitl binary: HITL_BIN, or one built from the repository."""
    given = os.environ.get("HITL_BIN")
    if given:
        return given
    out = out_dir / "hitl"
    subprocess.run(["go", "build", "-o", str(out), "./cmd/hitl"], cwd=REPO, check=True)
    return str(out)


def make_token(binary: str, db: Path, name: str, role: str) -> str:
    """Creates an API token in the database and returns its secret."""
    done = subprocess.run(
        [binary, "token", "create", "--name", name, "--role", role, "--db", str(db)],
        capture_output=True, text=True, check=True,
    )
    return done.stdout.strip()


class Server:
    """One running ``hitl serve``; ``url`` is where it listens."""

    def __init__(self, binary: str, db: Path, addr: str = "127.0.0.1:0") -> None:
        self.binary, self.db = binary, db
        self.url = ""
        self.logs: list[str] = []
        self._listening = threading.Event()
        self.proc = subprocess.Popen(
            [binary, "serve", "--addr", addr, "--db", str(db), "--log-format", "json"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        threading.Thread(target=self._read_logs, daemon=True).start()
        if not self._listening.wait(PATIENCE) or not self.url:
            self.stop()
            raise RuntimeError("hitl serve did not start:\n" + "\n".join(self.logs))
        status, _ = self.request("GET", "/readyz")
        assert status == 200, f"/readyz: {status}"

    def _read_logs(self) -> None:
        # Read stderr to the end, so the server never blocks on a full pipe.
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.logs.append(line.rstrip())
            try:
                doc = json.loads(line)
            except ValueError:
                continue
            if doc.get("msg") == "hitl listening":
                self.url = doc["url"]
                self._listening.set()
        self._listening.set()  # exited: let the starter see it

    def stop(self) -> None:
        """Shuts the server down gracefully and waits for it to exit."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(PATIENCE)

    def request(self, method: str, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
        """Sends one request straight to the server (not through the client
        under test) and returns the status and decoded body."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(req, timeout=PATIENCE) as resp:
                return resp.status, json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as e:
            with e:
                return e.code, json.loads(e.read() or b"null")

    def interaction(self, interaction_id: str) -> dict[str, Any]:
        """Returns the interaction as the server has it now."""
        status, doc = self.request("GET", f"/api/v1/interactions/{interaction_id}")
        assert status == 200, doc
        return dict(doc)


def fresh(question: str) -> str:
    """Returns question with a unique tag, so a test finds its own question."""
    return f"{question} [{uuid.uuid4().hex[:10]}]"
