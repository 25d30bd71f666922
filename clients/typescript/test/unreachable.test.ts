// A server that is down rejects with Unreachable; one that restarts while
// an agent waits is ridden out.

import assert from "node:assert/strict";
import { test } from "node:test";

import { Client, Unreachable } from "../src/index.js";
import { Person } from "./person.js";
import { Server, closedPortUrl, fresh, tempDb } from "./server.js";

test("server down", async () => {
  const url = await closedPortUrl();
  await assert.rejects(new Client({ url }).yesNo("Anyone there?"), (e: unknown) => {
    assert.ok(e instanceof Unreachable);
    assert.equal(e.code, "unreachable");
    assert.equal(e.status, undefined);
    assert.ok(e.message.includes(url), e.message);
    return true;
  });
  await assert.rejects(new Client({ url }).wait("some-id"), Unreachable);
});

test("a bad URL", () => {
  assert.throws(() => new Client({ url: "127.0.0.1:7878" }), TypeError);
});

test("a restart while waiting", async () => {
  const db = tempDb();
  const first = await Server.start(db);
  const client = new Client({ url: first.url });
  const q = fresh("Still there after a restart?");
  const asked = new Person(first).asked(q);
  const answer = client.askText(q);
  const { interaction_id } = await asked;
  await first.stop(); // the agent's long-poll is released; it polls again and fails
  const second = await Server.start(db, first.addr);
  try {
    await second.request("POST", `/api/v1/interactions/${interaction_id}/respond`, { value: "yes" });
    assert.equal(await answer, "yes");
  } finally {
    await second.stop();
  }
});
