// Questions that end without an answer, and requests the server refuses:
// each rejects with the right error class, carrying the server's code and message.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Cancelled, Client, Conflict, Expired, HitlError, InvalidAnswer, InvalidRequest, NotFound } from "../src/index.js";
import { Person } from "./person.js";
import { Server, fresh } from "./server.js";

let server: Server;
let person: Person;
let client: Client;

before(async () => {
  server = await Server.start();
  person = new Person(server);
  client = new Client({ url: server.url });
});
after(() => server.stop());

test("expired", async () => {
  await assert.rejects(client.yesNo(fresh("Anyone?"), { timeout: 0.2 }), (e: unknown) => {
    assert.ok(e instanceof Expired && e instanceof HitlError);
    assert.equal(e.code, "expired");
    assert.match(e.message, /timeout waiting for feedback/);
    assert.equal(e.interaction?.status, "expired");
    return true;
  });
});

test("the default at the deadline", async () => {
  const got = await client.choice(fresh("Which?"), ["Red", "Blue"], { timeout: 0.2, default: "Blue", defaultOnTimeout: true });
  assert.equal(got, "blue");
});

test("cancelled elsewhere", async () => {
  const q = fresh("Withdrawn?");
  const reply = person.cancel(q, "superseded by build 1433");
  await assert.rejects(client.yesNo(q), (e: unknown) => {
    assert.ok(e instanceof Cancelled);
    assert.equal(e.code, "cancelled");
    assert.equal(e.reason, "superseded by build 1433");
    return true;
  });
  assert.equal((await reply).status, 200);
});

test("a rejection is false, not an error", async () => {
  const q = fresh("Ship it?");
  void person.answer(q, "reject");
  assert.equal(await client.yesNo(q), false);
});

test("invalid answer", async () => {
  const created = await client.create({ interaction_type: "approval", question: fresh("Invalid?") });
  await assert.rejects(client.respond(created.interaction_id, "maybe"), (e: unknown) => {
    assert.ok(e instanceof InvalidAnswer);
    assert.equal(e.status, 422);
    assert.equal(e.code, "invalid_value");
    assert.match(e.message, /approval value must be true or false/);
    return true;
  });
  assert.equal((await server.interaction(created.interaction_id)).status, "pending", "an invalid answer is not recorded");
});

test("refused requests", async () => {
  await assert.rejects(client.choice(fresh("Pick from nothing?"), []), (e: unknown) => {
    assert.ok(e instanceof InvalidRequest);
    assert.equal(e.status, 400);
    assert.equal(e.code, "invalid");
    assert.equal(e.message, "single_choice needs at least one option");
    return true;
  });
  await assert.rejects(client.form(fresh("Not an object?"), { type: "string" }), InvalidRequest);
  await assert.rejects(client.get("no-such-interaction"), (e: unknown) => e instanceof NotFound && e.status === 404);
});

test("an answer after the end", async () => {
  const created = await client.create({ question: fresh("Answer twice?") });
  await client.respond(created.interaction_id, "first");
  await assert.rejects(client.respond(created.interaction_id, "second"), (e: unknown) => e instanceof Conflict && e.status === 409);

  const gone = await client.create({ question: fresh("Answer late?") });
  await client.cancel(gone.interaction_id, "changed my mind");
  await assert.rejects(client.respond(gone.interaction_id, "too late"), (e: unknown) => e instanceof Cancelled && e.status === 410);
});

test("idempotent retry: the same key waits on the same question", async () => {
  const q = fresh("Asked twice?");
  const key = `retry-${q}`;
  const asked = person.asked(q);
  const first = client.askText(q, { idempotencyKey: key });
  const { interaction_id } = await asked;
  // The agent restarts and asks again with the same key: the same question.
  const again = await client.create({ interaction_type: "free_text", question: q, idempotency_key: key });
  assert.equal(again.interaction_id, interaction_id);
  await server.request("POST", `/api/v1/interactions/${interaction_id}/respond`, { value: "once" });
  assert.equal(await first, "once");
  // Once answered, asking again returns the answer at once.
  assert.equal(await client.askText(q, { idempotencyKey: key }), "once");
  assert.equal((await client.list({ idempotencyKey: key })).interactions.length, 1);

  await assert.rejects(client.askText(fresh("Another question, same key?"), { idempotencyKey: key }), (e: unknown) => {
    assert.ok(e instanceof Conflict);
    assert.match(e.message, /idempotency_key/);
    return true;
  });
});
