"""The asyncio client."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, TypeVar, overload

from . import _action
from . import _questions as q
from ._action import ActionDecision, Decision
from ._client import (
    CREATE_ATTEMPTS,
    DEFAULT_POLL_TIMEOUT,
    DEFAULT_REQUEST_TIMEOUT,
    READ_SLACK,
    interaction_path,
    keep_trying,
    list_path,
    page_from_json,
    withdraw,
)
from ._errors import Unavailable, Unreachable
from ._questions import ChoiceSpec, Question
from ._transport import Transport, backoff
from ._types import Interaction, Page

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._questions import AskOptions

__all__ = ["AsyncClient"]

T = TypeVar("T")
A = TypeVar("A")

# The keys of a multi_choice answer (spelled out here: the clients' list
# method hides the built-in name inside the class).
Keys = list[str]


async def in_thread(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Runs a blocking call on its own daemon thread and awaits its result.

    Each request gets a thread, so any number of questions can wait at once
    (a long-poll holds its thread, and a bounded pool would queue the rest),
    and a thread still blocked when the program exits does not hold it up.
    Cancelling the awaiting task returns at once; the thread finishes on its
    own (a cancelled question's long-poll ends when the server cancels it).
    """
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[T] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if fut.done():
            return  # the caller stopped waiting
        if ok:
            fut.set_result(value)
        else:
            fut.set_exception(value)

    def run() -> None:
        ok: bool = False
        value: Any = None
        try:
            value, ok = fn(*args, **kwargs), True
        except BaseException as e:  # handed to the awaiting task
            value = e
        try:
            loop.call_soon_threadsafe(settle, ok, value)
        except RuntimeError:
            pass  # the event loop has closed

    threading.Thread(target=run, name="hitl-http", daemon=True).start()
    return await fut


class AsyncClient:
    """The asyncio twin of :class:`~hitl.Client`: the same methods, awaited.

    Cancelling the task that awaits a helper (``task.cancel()``, a timeout,
    Ctrl-C under ``asyncio.run``) cancels the question on the server before
    the cancellation propagates. Requests run on the standard library's
    urllib, one daemon thread per request in flight (see :func:`in_thread`):
    the same HTTP code as the synchronous client, with its TLS, proxy and
    error handling, and no third-party library.
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

    async def _request(self, method: str, path: str, body: Any = None, timeout: float | None = None) -> Any:
        _, doc = await in_thread(self._http.request, method, path, body, timeout=timeout)
        return doc

    # The HTTP API, one method a route.

    async def create(self, request: Mapping[str, Any]) -> Interaction:
        """Asks a question without waiting (see :meth:`hitl.Client.create`)."""
        return Interaction.from_json(await self._request("POST", "/api/v1/interactions", dict(request)))

    async def get(self, interaction_id: str) -> Interaction:
        """Returns one interaction as it stands."""
        return Interaction.from_json(await self._request("GET", interaction_path(interaction_id)))

    async def list(
        self,
        *,
        status: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        idempotency_key: str | None = None,
    ) -> Page:
        """Returns a page of interactions, newest first."""
        return page_from_json(await self._request("GET", list_path(status, limit, cursor, idempotency_key)))

    async def wait(self, interaction_id: str, *, timeout: float | None = None) -> Interaction:
        """Waits until the interaction ends and returns it (see :meth:`hitl.Client.wait`)."""
        return await self._wait(interaction_id, timeout, None)

    async def _wait(self, interaction_id: str, timeout: float | None, last: Interaction | None) -> Interaction:
        # last is the interaction as last seen: once the server has been
        # reached, failures are retried (see keep_trying).
        path = interaction_path(interaction_id, "wait")
        stop = None if timeout is None else time.monotonic() + timeout
        attempt = 0
        while True:
            poll = self._poll if stop is None else max(0.0, min(self._poll, stop - time.monotonic()))
            started = time.monotonic()
            try:
                doc = await self._request("GET", f"{path}?timeout={poll:.3f}", timeout=poll + READ_SLACK)
                last = Interaction.from_json(doc)
                if last.terminal or (stop is not None and time.monotonic() >= stop):
                    return last
                if time.monotonic() - started >= poll / 2:
                    attempt = 0
                    continue
            except (Unreachable, Unavailable):
                if not keep_trying(last, stop):
                    raise
            pause = backoff(attempt)
            if stop is not None:
                pause = max(0.0, min(pause, stop - time.monotonic()))
            await asyncio.sleep(pause)
            attempt += 1

    async def respond(self, interaction_id: str, value: Any) -> Interaction:
        """Answers a pending interaction (see :meth:`hitl.Client.respond`)."""
        return Interaction.from_json(await self._request("POST", interaction_path(interaction_id, "respond"), {"value": value}))

    async def cancel(self, interaction_id: str, reason: str | None = None) -> Interaction:
        """Withdraws a pending interaction."""
        body = {"reason": reason} if reason else {}
        return Interaction.from_json(await self._request("POST", interaction_path(interaction_id, "cancel"), body))

    # Asking and waiting.

    async def ask(self, request: Mapping[str, Any]) -> Interaction:
        """Asks and waits until the question ends (see :meth:`hitl.Client.ask`).
        Cancelling the task cancels the question on the server, then the
        cancellation propagates."""
        req = dict(request)
        if not req.get("idempotency_key"):
            req["idempotency_key"] = q.new_key()
        if self._agent and not req.get("source_agent"):
            req["source_agent"] = self._agent
        interaction: Interaction | None = None
        try:
            interaction = await self._create_retrying(req)
            return q.outcome(await self._wait(interaction.id, None, interaction))
        except asyncio.CancelledError:
            await in_thread(withdraw, self._http, req, interaction)
            raise

    async def _create_retrying(self, req: Mapping[str, Any]) -> Interaction:
        for attempt in range(CREATE_ATTEMPTS):
            try:
                return await self.create(req)
            except (Unreachable, Unavailable):
                if attempt == CREATE_ATTEMPTS - 1:
                    raise
                await asyncio.sleep(backoff(attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    async def _ask(self, question: Question[T]) -> T:
        return question.read(await self.ask(question.request))

    # Handing the conversation to a person.

    async def handoff(self, message: str, **options: Unpack[AskOptions]) -> str:
        """Hands the conversation to a person and returns the handoff's id at
        once (see :meth:`hitl.Client.handoff`)."""
        req = q.handoff(message, options)
        if not req.get("idempotency_key"):
            req["idempotency_key"] = q.new_key()
        if self._agent and not req.get("source_agent"):
            req["source_agent"] = self._agent
        return (await self._create_retrying(req)).id

    async def wait_reply(self, interaction_id: str) -> str:
        """Waits for the person's reply to the handoff and returns it (see
        :meth:`hitl.Client.wait_reply`). Cancelling the task stops waiting
        and leaves the handoff pending."""
        return q.reply(await self._wait(interaction_id, None, None))

    async def ask_text(self, question: str, **options: Unpack[AskOptions]) -> str:
        """Asks a free-text question and returns the text."""
        return await self._ask(q.text(question, options))

    async def yes_no(
        self, question: str, *, yes_label: str | None = None, no_label: str | None = None, **options: Unpack[AskOptions]
    ) -> bool:
        """Asks for an approval and returns True when the person approves."""
        return await self._ask(q.yes_no(question, yes_label, no_label, options))

    async def choice(self, question: str, choices: Sequence[ChoiceSpec], **options: Unpack[AskOptions]) -> str:
        """Asks the person to pick one of ``choices`` and returns its key."""
        return await self._ask(q.choice(question, choices, options))

    async def choices(self, question: str, choices: Sequence[ChoiceSpec], **options: Unpack[AskOptions]) -> Keys:
        """Asks the person to pick any number of ``choices`` and returns their keys."""
        return await self._ask(q.choices(question, choices, options))

    @overload
    async def form(self, question: str, schema: type[T], **options: Unpack[AskOptions]) -> T: ...

    @overload
    async def form(self, question: str, schema: Mapping[str, Any], **options: Unpack[AskOptions]) -> dict[str, Any]: ...

    async def form(self, question: str, schema: Any, **options: Unpack[AskOptions]) -> Any:
        """Asks the person to fill in a form (see :meth:`hitl.Client.form`)."""
        return await self._ask(q.form(question, schema, options))

    async def review_action(
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
        """Asks a person to review a tool call and returns their decision
        (see :meth:`hitl.Client.review_action`)."""
        review = {"question": question, "description": description, "args_schema": args_schema,
                  "decisions": decisions, "reject_requires_message": reject_requires_message}
        return await self._ask(_action.action(name, args, review, options))
