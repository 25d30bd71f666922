// Handing the conversation to a person: handoff resolves with the id at
// once; the person's reply comes back through the wait.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Cancelled, Client } from "../src/index.js";
import { watchQuestions } from "./person.js";
import { Server, fresh } from "./server.js";

let server: Server;
let client: Client;

before(async () => {
  server = await Server.start();
  client = new Client({ url: server.url, agent: "node-test" });
});
after(() => server.stop());

test("handoff resolves with the id, waitReply with the person's reply", async () => {
  const msg = fresh("The customer wants to talk to a person.");
  let seen: Record<string, unknown> | undefined;
  const watched = watchQuestions(server, (m) => {
    const doc = m as unknown as Record<string, unknown>;
    if (doc.message !== msg) return false;
    seen = doc;
    return true;
  }, undefined, "hitl:handoff");

  const id: string = await client.handoff(msg, { context: "Order **1432**.", sessionId: "chat-ts", timeout: 600 });
  const pending = await client.get(id);
  assert.equal(pending.status, "pending");
  assert.equal(pending.interaction_type, "handoff");
  assert.equal(pending.session_id, "chat-ts");

  await watched; // the stream carried it as hitl:handoff, not hitl:question
  assert.equal(seen?.interaction_id, id);
  assert.equal(seen?.session_id, "chat-ts");

  const replied = client.waitReply(id);
  const person = new Client({ url: server.url });
  await person.respond(id, "Hi, Ana here. I'll take it from here.");
  const got: string = await replied;
  assert.equal(got, "Hi, Ana here. I'll take it from here.");
  assert.equal((await client.wait(id)).result?.value, "Hi, Ana here. I'll take it from here.");
});

test("waitReply rejects with Cancelled for a withdrawn handoff", async () => {
  const id = await client.handoff(fresh("Over to a person, then withdrawn."));
  await client.cancel(id, "the customer left");
  await assert.rejects(client.waitReply(id), Cancelled);
});

test("handoff takes no default", async () => {
  await assert.rejects(client.handoff("Over to you", { default: "ok" } as never), TypeError);
});
