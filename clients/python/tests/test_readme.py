"""Every Python example in README.md runs against a real server, with a
person answering whatever it asks."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hitlserver import PATIENCE, Server
from person import AutoPerson

README = Path(__file__).resolve().parents[1] / "README.md"
CLIENTS_PAGE = Path(__file__).resolve().parents[3] / "docs" / "clients.md"
SRC = str(Path(__file__).resolve().parents[1] / "src")
# This package's README, and docs/clients.md's example beside Go's and TypeScript's.
# The framework recipes, which need packages from PyPI: compiled, not run.
RECIPES = re.findall(r"^<!-- recipe: not run here, needs [\w-]+ -->\n```python\n(.*?)^```$", README.read_text(), flags=re.S | re.M)
EXAMPLES = re.findall(r"^```python\n(.*?)^```$", re.sub(r"<!-- recipe: [^>]*-->\n```python\n.*?^```$", "", README.read_text(), flags=re.S | re.M), flags=re.S | re.M) + re.findall(
    r"^<!-- snippet: clients-python -->\n\n```python\n(.*?)^```$", CLIENTS_PAGE.read_text(), flags=re.S | re.M
)


@pytest.fixture(scope="module")
def answered_server(hitl_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(hitl_bin, tmp_path_factory.mktemp("readme") / "hitl.db")
    AutoPerson(srv)
    yield srv
    srv.stop()


def test_recipes_compile() -> None:
    assert len(RECIPES) == 4, "LangGraph (two), the OpenAI Agents SDK, CrewAI"
    for code in RECIPES:
        compile(code, "recipe", "exec")
        for name in re.findall(r"^from hitl(?:\.interrupts)? import (.+)$", code, flags=re.M):
            module = __import__("hitl.interrupts" if "answer_interrupt" in name else "hitl", fromlist=["x"])
            for n in name.split(", "):
                assert hasattr(module, n), f"the recipe imports {n}, which hitl does not have"


def test_readme_has_examples() -> None:
    assert len(EXAMPLES) >= 6
    assert "hitl.yes_no(" in EXAMPLES[-1], "docs/clients.md's example is found"


@pytest.mark.parametrize("code", EXAMPLES, ids=[f"example{i + 1}" for i in range(len(EXAMPLES))])
def test_readme_example(code: str, answered_server: Server, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": SRC, "HITL_URL": answered_server.url, "HITL_AGENT": "readme"}
    env.pop("HITL_TOKEN", None)
    script = tmp_path / "example.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=PATIENCE)
    assert done.returncode == 0, f"example failed:\n{code}\nstderr:\n{done.stderr}"
    assert done.stdout.strip(), "every example prints what it got"
    status, doc = answered_server.request("GET", "/api/v1/interactions?status=pending")
    assert status == 200 and doc["interactions"] == [], "the example left a question pending"
