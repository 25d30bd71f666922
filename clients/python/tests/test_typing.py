"""The answer's type follows the question's, for type checkers: mypy checks
this file (the Go test runs it when mypy is installed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

import hitl


@dataclass
class Release:
    version: str


class Ticket(TypedDict):
    title: str


if TYPE_CHECKING:
    from typing_extensions import assert_type

    def sync_answers(c: hitl.Client) -> None:
        assert_type(c.ask_text("q", timeout=60, context="c"), str)
        assert_type(c.yes_no("q", yes_label="Go"), bool)
        assert_type(c.choice("q", ["a", hitl.Option("b", "B")]), str)
        assert_type(c.choices("q", ["a", {"key": "b", "label": "B"}]), list[str])
        assert_type(c.form("q", Release), Release)
        assert_type(c.form("q", Ticket), Ticket)
        assert_type(c.handoff("over to you", session_id="s", context="c"), str)
        assert_type(c.wait_reply("id"), str)
        assert_type(c.form("q", {"type": "object"}), dict[str, Any])
        assert_type(c.ask({"question": "q"}), hitl.Interaction)
        assert_type(c.review_action("Bash", {"command": "ls"}), hitl.ActionDecision[dict[str, str]])
        assert_type(c.review_action("Bash", Release("1.0")).args, Release | None)
        c.review_action("Bash", {"command": "ls"}, decisions=["approve", "maybe"])  # type: ignore[list-item]
        c.ask_text("q", timout=60)  # type: ignore[call-arg]

    async def async_answers(c: hitl.AsyncClient) -> None:
        assert_type(await c.yes_no("q"), bool)
        assert_type(await c.handoff("over to you"), str)
        assert_type(await c.wait_reply("id"), str)
        assert_type(await c.choices("q", ["a"]), list[str])
        assert_type(await c.form("q", Release), Release)
        assert_type(await c.review_action("Bash", Release("1.0")), hitl.ActionDecision[Release])


def test_types_are_checked_by_mypy() -> None:
    """A placeholder so pytest sees the file; the checks above are static."""
    assert hitl.Client("http://127.0.0.1:1").base_url == "http://127.0.0.1:1"
