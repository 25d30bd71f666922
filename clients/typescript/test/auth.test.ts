// A server with API tokens: the agent's token asks, a responder's answers,
// and the server's refusals reject with Unauthorized and Forbidden.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Client, Forbidden, Unauthorized } from "../src/index.js";
import { Person } from "./person.js";
import { Server, fresh, makeToken, tempDb } from "./server.js";

let server: Server;
let agentToken: string;
let responderToken: string;

before(async () => {
  const db = tempDb();
  agentToken = makeToken(db, "build-bot", "agent");
  responderToken = makeToken(db, "pager", "responder");
  server = await Server.start(db);
});
after(() => server.stop());

test("the agent's token asks, a responder answers", async () => {
  const q = fresh("Rotate the keys?");
  void new Person(server, responderToken).answer(q, "approve");
  const got = await new Client({ url: server.url, token: agentToken }).ask({ interaction_type: "approval", question: q });
  assert.equal(got.result?.value, true);
  assert.equal(got.created_by, "build-bot");
  assert.equal(got.result?.responded_by, "pager");
});

test("HITL_URL and HITL_TOKEN from the environment", async () => {
  const saved = { url: process.env["HITL_URL"], token: process.env["HITL_TOKEN"] };
  process.env["HITL_URL"] = server.url;
  process.env["HITL_TOKEN"] = agentToken;
  try {
    const q = fresh("From the environment?");
    void new Person(server, responderToken).answer(q, "yes");
    assert.equal(await new Client().askText(q), "yes");
  } finally {
    for (const [name, value] of [["HITL_URL", saved.url], ["HITL_TOKEN", saved.token]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
});

test("no token, or a bad one", async () => {
  for (const token of ["", "hitl_not-a-real-token"]) {
    await assert.rejects(new Client({ url: server.url, token }).askText(fresh("Let me in?")), (e: unknown) => {
      assert.ok(e instanceof Unauthorized);
      assert.equal(e.status, 401);
      assert.equal(e.code, "unauthorized");
      return true;
    });
  }
});

test("forbidden", async () => {
  await assert.rejects(new Client({ url: server.url, token: responderToken }).yesNo(fresh("May a responder ask?")), (e: unknown) => e instanceof Forbidden && e.status === 403);
  const agent = new Client({ url: server.url, token: agentToken });
  const created = await agent.create({ question: fresh("May an agent answer?") });
  await assert.rejects(agent.respond(created.interaction_id, "self-approved"), (e: unknown) => {
    assert.ok(e instanceof Forbidden);
    assert.match(e.message, /agents cannot answer/);
    return true;
  });
});
