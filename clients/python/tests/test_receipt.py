"""verify_receipt (with the cryptography package) against a real server's receipts and keys."""

import time
from typing import Any

import pytest

import hitl
from hitlserver import Server

ARGS = {"command": "ls", "cwd": "/tmp", "n": 1}


@pytest.fixture(scope="module")
def approved(server: Server) -> tuple[str, str, dict[str, Any]]:
    status, created = server.request("POST", "/api/v1/interactions", {
        "interaction_type": "action", "source_agent": "python-test", "action": {"name": "Bash", "args": ARGS},
    })
    assert status == 201, created
    iid = created["interaction_id"]
    status, answered = server.request("POST", f"/api/v1/interactions/{iid}/respond", {"value": {"decision": "approve"}})
    assert status == 200, answered
    receipt = answered["result"]["receipt"]
    assert receipt, "an approved action carries result['receipt']"
    return iid, receipt, hitl.fetch_receipt_keys(server.url)


def test_valid(approved: tuple[str, str, dict[str, Any]]) -> None:
    iid, receipt, keys = approved
    claims = hitl.verify_receipt(receipt, keys, interaction_id=iid, name="Bash", args={"n": 1.0, "cwd": "/tmp", "command": "ls"})
    assert claims["sub"] == iid and claims["agent"] == "python-test"


def test_refused(approved: tuple[str, str, dict[str, Any]]) -> None:
    iid, receipt, keys = approved
    h, p, _ = receipt.split(".")
    cases: list[tuple[str, dict[str, Any], str]] = [
        (receipt, {"args": {"command": "rm -rf /", "cwd": "/tmp", "n": 1}}, "other args"),
        (receipt, {"name": "Write"}, 'for tool "Bash", not "Write"'),
        (receipt, {"now": time.time() + 2 * 3600}, "expired at"),
        (f"{h}.{p}.{'A' * 86}", {}, "forged or altered"),
        ("nope", {}, "not a compact JWS"),
    ]
    for token, expect, why in cases:
        with pytest.raises(hitl.ReceiptError, match=why):
            hitl.verify_receipt(token, keys, **expect)
    with pytest.raises(hitl.ReceiptError, match=r"not published \(rotated out"):
        hitl.verify_receipt(receipt, {"keys": []})


def test_canonical_json() -> None:
    got = hitl.canonical_json({"b": [1.0, "é\u2028", 0.001, 1e21], "a": {"d": None, "c": True}, "\ufb01": 1, "\U0001F600": 2})
    assert got == '{"a":{"c":true,"d":null},"b":[1,"é\u2028",0.001,1e+21],"\U0001F600":2,"\ufb01":1}'
