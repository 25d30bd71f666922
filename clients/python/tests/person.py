"""The person who answers: they watch the server's event stream
(``/api/v1/events``) for a question and answer or cancel it over the HTTP
API, as the web inbox would. Tests wait on that signal, never on a sleep."""

from __future__ import annotations

import json
import threading
import urllib.request
from typing import Any

from hitlserver import PATIENCE, Server


class Asked:
    """Watches the event stream for the question (or handoff) containing
    ``text`` and records it (``id``, ``message``: the hitl:question or
    hitl:handoff payload)."""

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
                    elif line.startswith("data:") and event in ("hitl:question", "hitl:handoff"):
                        doc = json.loads(line[5:])
                        if self.text in doc.get("question", doc.get("message", "")):
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


def sample_answer(message: dict[str, Any]) -> Any:
    """Returns a valid answer to a hitl:question: approve (an approval or
    an action), the first option, or a form filled in from its schema."""
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
    if kind == "action":
        return {"decision": "approve"}
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
