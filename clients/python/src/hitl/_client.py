"""The synchronous client."""

from __future__ import annotations

import os
import time
from datetime import datetime, timezone
import urllib.parse
from typing import TYPE_CHECKING, Any, Mapping, Sequence, TypeVar, overload

from . import _action
from . import _questions as q
from ._action import ActionDecision, Decision
from ._errors import HitlError, Unavailable, Unreachable
from ._questions import CANCEL_REASON, ChoiceSpec, Question
from ._transport import Transport, backoff
from ._types import Interaction, Page

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._questions import AskOptions

__all__ = ["Client"]

T = TypeVar("T")
A = TypeVar("A")

# The keys of a multi_choice answer (spelled out here: the clients' list
# method hides the built-in name inside the class).
Keys = list[str]

#: How long each long-poll asks the server to hold the request (the server
#: holds at most 300 s).
DEFAULT_POLL_TIMEOUT = 60.0
#: The socket timeout of every request that is not a long-poll.
DEFAULT_REQUEST_TIMEOUT = 30.0
# Added to a long-poll's socket timeout, for the server's reply to arrive.
READ_SLACK = 15.0
# How often a create is sent before an unreachable server is reported; the
# idempotency key makes a repeat return the same interaction.
CREATE_ATTEMPTS = 3
# How long after an interaction's deadline an unreachable server is still
# waited for: the answer may have come in before the deadline.
_DEADLINE_GRACE = 60.0
# The timeout of the request that cancels a question the caller stopped
# waiting for.
_CANCEL_TIMEOUT = 5.0


def interaction_path(interaction_id: str, action: str = "") -> str:
    """Returns the API path of one interaction, plus an action such as "wait"."""
    if not interaction_id:
        raise ValueError("interaction_id is required")
    path = "/api/v1/interactions/" + urllib.parse.quote(interaction_id, safe="")
    return f"{path}/{action}" if action else path


def list_path(status: str | None, limit: int | None, cursor: str | None, idempotency_key: str | None) -> str:
    """Returns the path of a page of interactions with the given filters."""
    query = {"status": status, "limit": limit, "cursor": cursor, "idempotency_key": idempotency_key}
    qs = urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
    return "/api/v1/interactions" + (f"?{qs}" if qs else "")


def page_from_json(doc: Mapping[str, Any]) -> Page:
    """Builds a Page from GET /api/v1/interactions."""
    return Page(tuple(Interaction.from_json(d) for d in doc.get("interactions") or ()), doc.get("next_cursor"))


def keep_trying(last: Interaction | None, stop: float | None) -> bool:
    """Reports whether a wait should retry after the server could not be
    reached: only once it has been reached (so a wrong URL fails at once),
    before the caller's own timeout, and until a while after the
    interaction's deadline."""
    if last is None or (stop is not None and time.monotonic() >= stop):
        return False
    if last.deadline is None:
        return True
    return (datetime.now(timezone.utc) - last.deadline).total_seconds() < _DEADLINE_GRACE


def withdraw(http: Transport, req: Mapping[str, Any], interaction: Interaction | None) -> None:
    """Cancels the question of an interrupted ask, best effort: when the
    create was cut off, sending it again with its key finds (or makes) the
    interaction to cancel, so nothing is left pending with nobody waiting."""
    try:
        if interaction is None:
            _, doc = http.request("POST", "/api/v1/interactions", dict(req), timeout=_CANCEL_TIMEOUT)
            interaction = Interaction.from_json(doc)
        if not interaction.terminal:
            http.request("POST", interaction_path(interaction.id, "cancel"), {"reason": CANCEL_REASON}, timeout=_CANCEL_TIMEOUT)
    except HitlError:
        pass  # answered or expired first, or the server is gone


class Client:
    """A client for one hitl server, for agents that block while a person answers.

    ``url`` defaults to the HITL_URL environment variable, then
    ``http://127.0.0.1:7878``; ``token`` to HITL_TOKEN (sent as
    ``Authorization: Bearer ...``); ``agent``, the name shown to the person
    with each question, to HITL_AGENT. A client holds no connections and is
    safe to share between threads.

    The helpers (:meth:`ask_text`, :meth:`yes_no`, :meth:`choice`,
    :meth:`choices`, :meth:`form`, :meth:`review_action`) ask and block
    until the person answers, then return the typed value. A question nobody answers in time raises
    :class:`~hitl.Expired`, a withdrawn one :class:`~hitl.Cancelled`, and
    Ctrl-C (KeyboardInterrupt) while waiting cancels the question on the
    server before it propagates.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        token: str | None = None,
        agent: str | None = None,
        poll_timeout: float = DEFAULT_POLL_TIMEOUT,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    ) -> None:
        self._http = Transport(url, token, request_timeout)
        self._agent = agent if agent is not None else os.environ.get("HITL_AGENT") or None
        self._poll = min(max(poll_timeout, 0.0), 300.0)

    @property
    def base_url(self) -> str:
        """The server address the client talks to."""
        return self._http.base_url

    # The HTTP API, one method a route.

    def create(self, request: Mapping[str, Any]) -> Interaction:
        """Asks a question without waiting (``POST /api/v1/interactions``).
        ``request`` is the API's JSON body (``interaction_type``,
        ``question``, ``options``, ...); repeating it with the same
        ``idempotency_key`` returns the same interaction."""
        _, doc = self._http.request("POST", "/api/v1/interactions", dict(request))
        return Interaction.from_json(doc)

    def get(self, interaction_id: str) -> Interaction:
        """Returns one interaction as it stands."""
        _, doc = self._http.request("GET", interaction_path(interaction_id))
        return Interaction.from_json(doc)

    def list(
        self,
        *,
        status: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        idempotency_key: str | None = None,
    ) -> Page:
        """Returns a page of interactions, newest first."""
        _, doc = self._http.request("GET", list_path(status, limit, cursor, idempotency_key))
        return page_from_json(doc)

    def wait(self, interaction_id: str, *, timeout: float | None = None) -> Interaction:
        """Blocks until the interaction ends and returns it, long-polling the
        server and polling again while it is pending. With ``timeout``
        (seconds) it returns the interaction as it stands, perhaps still
        pending, once that time has passed.

        A server restart is ridden out: when the server cannot be reached
        (or answers 502/503/504) after it was reached once, the poll is
        retried with backoff until a minute past the interaction's deadline;
        then Unreachable is raised."""
        return self._wait(interaction_id, timeout, None)

    def _wait(self, interaction_id: str, timeout: float | None, last: Interaction | None) -> Interaction:
        # last is the interaction as last seen: once the server has been
        # reached, failures are retried (see keep_trying).
        path = interaction_path(interaction_id, "wait")
        stop = None if timeout is None else time.monotonic() + timeout
        attempt = 0
        while True:
            poll = self._poll if stop is None else max(0.0, min(self._poll, stop - time.monotonic()))
            started = time.monotonic()
            try:
                _, doc = self._http.request("GET", f"{path}?timeout={poll:.3f}", timeout=poll + READ_SLACK)
                last = Interaction.from_json(doc)
                if last.terminal or (stop is not None and time.monotonic() >= stop):
                    return last
                if time.monotonic() - started >= poll / 2:
                    attempt = 0  # a whole long-poll with no news: ask again at once
                    continue
                # Handed back early, as a server does when it shuts down.
            except (Unreachable, Unavailable):
                if not keep_trying(last, stop):
                    raise
            pause = backoff(attempt)
            if stop is not None:
                pause = max(0.0, min(pause, stop - time.monotonic()))
            time.sleep(pause)
            attempt += 1

    def respond(self, interaction_id: str, value: Any) -> Interaction:
        """Answers a pending interaction (as a person or a responder bot
        would). The server validates the value: an invalid one raises
        InvalidAnswer, a second answer Conflict, a late one Expired."""
        _, doc = self._http.request("POST", interaction_path(interaction_id, "respond"), {"value": value})
        return Interaction.from_json(doc)

    def cancel(self, interaction_id: str, reason: str | None = None) -> Interaction:
        """Withdraws a pending interaction; it leaves the person's inbox.
        Cancelling a cancelled one returns it unchanged."""
        body = {"reason": reason} if reason else {}
        _, doc = self._http.request("POST", interaction_path(interaction_id, "cancel"), body)
        return Interaction.from_json(doc)

    # Asking and waiting.

    def ask(self, request: Mapping[str, Any]) -> Interaction:
        """Asks (``request`` as for :meth:`create`) and blocks until the
        question ends; returns the answered interaction. Raises Expired or
        Cancelled when it ends unanswered.

        Without an ``idempotency_key`` a random one is made, so a create
        whose reply was lost is sent again safely, and a question whose
        create was interrupted can be found and cancelled. KeyboardInterrupt
        cancels the question on the server (reason "agent_cancelled") and
        is raised again."""
        req = dict(request)
        if not req.get("idempotency_key"):
            req["idempotency_key"] = q.new_key()
        if self._agent and not req.get("source_agent"):
            req["source_agent"] = self._agent
        interaction: Interaction | None = None
        try:
            interaction = self._create_retrying(req)
            return q.outcome(self._wait(interaction.id, None, interaction))
        except KeyboardInterrupt:
            withdraw(self._http, req, interaction)
            raise

    def _create_retrying(self, req: Mapping[str, Any]) -> Interaction:
        for attempt in range(CREATE_ATTEMPTS):
            try:
                return self.create(req)
            except (Unreachable, Unavailable):
                if attempt == CREATE_ATTEMPTS - 1:
                    raise
                time.sleep(backoff(attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    def _ask(self, question: Question[T]) -> T:
        return question.read(self.ask(question.request))

    # Handing the conversation to a person.

    def handoff(self, message: str, **options: Unpack[AskOptions]) -> str:
        """Hands the conversation to a person and returns the handoff's id at
        once: the agent stops. ``message`` is the agent's message to the
        person; ``context`` what they need to know, ``session_id`` the
        conversation (a chat frontend on hitl's stream shows the handoff in
        it), ``targets`` who may take it, ``timeout`` how long a reply is
        awaited. The person's reply is the handoff's answer: whoever resumes
        the agent gets it with :meth:`wait_reply` (or :meth:`wait`, as
        ``.value``)."""
        req = q.handoff(message, options)
        if not req.get("idempotency_key"):
            req["idempotency_key"] = q.new_key()
        if self._agent and not req.get("source_agent"):
            req["source_agent"] = self._agent
        return self._create_retrying(req).id

    def wait_reply(self, interaction_id: str) -> str:
        """Blocks until the person replies to the handoff ``interaction_id``
        and returns the reply (see :meth:`wait`). Raises Expired when nobody
        replied before its deadline, Cancelled when it was withdrawn.
        KeyboardInterrupt stops waiting and leaves the handoff pending."""
        return q.reply(self._wait(interaction_id, None, None))

    def ask_text(self, question: str, **options: Unpack[AskOptions]) -> str:
        """Asks a free-text question, such as a one-time code, and returns the text."""
        return self._ask(q.text(question, options))

    def yes_no(
        self, question: str, *, yes_label: str | None = None, no_label: str | None = None, **options: Unpack[AskOptions]
    ) -> bool:
        """Asks for an approval and returns True when the person approves,
        False when they reject. The buttons read ``yes_label`` and
        ``no_label`` (default "Approve" and "Reject")."""
        return self._ask(q.yes_no(question, yes_label, no_label, options))

    def choice(self, question: str, choices: Sequence[ChoiceSpec], **options: Unpack[AskOptions]) -> str:
        """Asks the person to pick one of ``choices`` and returns its key
        (a label's key is derived: "EU West" is "eu_west")."""
        return self._ask(q.choice(question, choices, options))

    def choices(self, question: str, choices: Sequence[ChoiceSpec], **options: Unpack[AskOptions]) -> Keys:
        """Asks the person to pick any number of ``choices`` and returns their keys."""
        return self._ask(q.choices(question, choices, options))

    @overload
    def form(self, question: str, schema: type[T], **options: Unpack[AskOptions]) -> T: ...

    @overload
    def form(self, question: str, schema: Mapping[str, Any], **options: Unpack[AskOptions]) -> dict[str, Any]: ...

    def form(self, question: str, schema: Any, **options: Unpack[AskOptions]) -> Any:
        """Asks the person to fill in a form. ``schema`` is a JSON Schema
        (a dict; the answer is a dict valid against it), or a dataclass or
        TypedDict class: its schema is derived (see :func:`hitl.schema_for`)
        and the answer is returned as that type."""
        return self._ask(q.form(question, schema, options))

    def review_action(
        self,
        name: str,
        args: A,
        *,
        question: str = "",
        description: str = "",
        args_schema: Mapping[str, Any] | None = None,
        decisions: Sequence[Decision] | None = None,
        reject_requires_message: bool = False,
        **options: Unpack[AskOptions],
    ) -> ActionDecision[A]:
        """Asks a person to review a call of the tool ``name`` with ``args``
        and returns their decision. ``args`` is a mapping, or a dataclass
        instance (its schema, see :func:`hitl.schema_for`, is what an edit
        must meet unless ``args_schema`` is given, and an edit comes back as
        that dataclass). ``decisions`` limits what the person may do
        (default all four), ``reject_requires_message`` makes a reason
        required. A reject or a respond is a decision, not an error: check
        ``.run`` before running the tool. A rule may decide at once, without
        a person (``.rule_id``)."""
        review = {"question": question, "description": description, "args_schema": args_schema,
                  "decisions": decisions, "reject_requires_message": reject_requires_message}
        return self._ask(_action.action(name, args, review, options))
