"""A real hitl server for the tests, and a person who answers it.

The server is the repository's own ``hitl serve`` (HITL_BIN, or built here
with ``go build``), on a free port, over a temp SQLite file. The person
watches the server's event stream (``/api/v1/events``) for a question and
answers or cancels it over the HTTP API, as the web inbox would: the tests
wait on that signal, never on a sleep.
"""

from __future__ import annotations

import http.server
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


class Asked:
    """Watches the event stream for the question containing ``text`` and
    records it (``id``, ``message``: the hitl:question payload)."""

    def __init__(self, server: Server, text: str, token: str | None = None) -> None:
        self.server, self.text, self.token = server, text, token
        self.id = ""
        self.message: dict[str, Any] = {}
        self.error: BaseException | None = None
        self._seen = threading.Event()
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self) -> None:
        try:
            req = urllib.request.Request(self.server.url + "/api/v1/events")
            if self.token:
                req.add_header("Authorization", f"Bearer {self.token}")
            with urllib.request.urlopen(req, timeout=PATIENCE) as stream:
                event = ""
                for raw in stream:
                    line = raw.decode().rstrip("\r\n")
                    if line.startswith("event:"):
                        event = line[6:].strip()
                    elif line.startswith("data:") and event == "hitl:question":
                        doc = json.loads(line[5:])
                        if self.text in doc.get("question", ""):
                            self.id, self.message = doc["interaction_id"], doc
                            return
        except BaseException as e:  # reported by wait()
            self.error = e
        finally:
            self._seen.set()

    def wait(self) -> str:
        """Blocks until the question has been asked and returns its id."""
        assert self._seen.wait(PATIENCE), f"nobody asked {self.text!r}"
        assert self.id, f"event stream ended before {self.text!r} was asked: {self.error!r}"
        return self.id


class Person:
    """Answers questions on the server as a person in the web inbox would."""

    def __init__(self, server: Server, token: str | None = None) -> None:
        self.server, self.token = server, token

    def asked(self, text: str) -> Asked:
        """Starts watching for the question containing text."""
        return Asked(self.server, text, self.token)

    def answer(self, text: str, value: Any) -> Reply:
        """Answers the question containing text with value once it is asked,
        in the background; the Reply tells how the server took it."""
        return Reply(self, self.asked(text), "respond", {"value": value})

    def cancel(self, text: str, reason: str) -> Reply:
        """Cancels the question containing text once it is asked."""
        return Reply(self, self.asked(text), "cancel", {"reason": reason})


class Reply:
    """An answer or cancel sent in the background once a question is asked."""

    def __init__(self, person: Person, asked: Asked, action: str, body: dict[str, Any]) -> None:
        self.asked = asked
        self.status = 0
        self.body: Any = None
        self._done = threading.Event()

        def run() -> None:
            try:
                iid = asked.wait()
                self.status, self.body = person.server.request(
                    "POST", f"/api/v1/interactions/{iid}/{action}", body, person.token
                )
            finally:
                self._done.set()

        threading.Thread(target=run, daemon=True).start()

    def result(self) -> tuple[int, Any]:
        """Waits for the reply to be sent and returns the server's status and body."""
        assert self._done.wait(PATIENCE), "the reply was never sent"
        return self.status, self.body


class HoldingProxy:
    """Forwards every request to the server, but holds back the reply to
    the first one: the server has done the request (a create has stored its
    question) and the client is still waiting for the answer, so a test can
    interrupt it at that moment. ``held`` is the withheld reply's body."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.forwarded = threading.Event()
        self.held: Any = None
        self._first = threading.Lock()
        self._release = threading.Event()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._forward()

            def do_POST(self) -> None:
                self._forward()

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
                req = urllib.request.Request(proxy.upstream + self.path, data=body, method=self.command)
                for name in ("Content-Type", "Authorization"):
                    if self.headers.get(name):
                        req.add_header(name, self.headers[name])
                try:
                    with urllib.request.urlopen(req, timeout=PATIENCE) as resp:
                        status, data = resp.status, resp.read()
                except urllib.error.HTTPError as e:
                    with e:
                        status, data = e.code, e.read()
                if proxy._first.acquire(blocking=False):
                    proxy.held = json.loads(data)
                    proxy.forwarded.set()
                    proxy._release.wait(PATIENCE)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client hung up, as the test meant it to

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def wait_forwarded(self) -> Any:
        """Blocks until the first request has reached the server; returns its reply."""
        assert self.forwarded.wait(PATIENCE), "no request reached the proxy"
        return self.held

    def close(self) -> None:
        """Releases the held reply and stops the proxy."""
        self._release.set()
        self._httpd.shutdown()
        self._httpd.server_close()


def sample_answer(message: dict[str, Any]) -> Any:
    """Returns a valid answer to a hitl:question: approve, the first
    option, or a form filled in from its schema."""
    kind = message["interaction_type"]
    keys = [o["key"] for o in message.get("options") or ()]
    if kind == "approval":
        return True
    if kind == "single_choice":
        return keys[0]
    if kind == "multi_choice":
        return keys[:1]
    if kind == "form":
        return _sample(message["form_schema"])
    return "an answer"


def _sample(schema: dict[str, Any]) -> Any:
    if "default" in schema:
        return schema["default"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: _sample(props[k]) for k in schema.get("required", [])}
    if kind == "array":
        return []
    if kind == "string":
        return {"date": "2025-01-02", "date-time": "2025-01-02T03:04:05Z"}.get(schema.get("format", ""), "text")
    return {"integer": 1, "number": 1.5, "boolean": True}.get(str(kind))


class AutoPerson:
    """Answers every question the server is asked, at once, with
    sample_answer; ``answered`` lists the questions."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.answered: list[str] = []
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        with urllib.request.urlopen(self.server.url + "/api/v1/events", timeout=None) as stream:
            event = ""
            for raw in stream:
                line = raw.decode().rstrip("\r\n")
                if line.startswith("event:"):
                    event = line[6:].strip()
                elif line.startswith("data:") and event == "hitl:question":
                    msg = json.loads(line[5:])
                    self.server.request("POST", f"/api/v1/interactions/{msg['interaction_id']}/respond",
                                        {"value": sample_answer(msg)})
                    self.answered.append(msg["question"])
