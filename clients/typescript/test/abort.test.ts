// An aborted signal takes the question back on the server, even while the
// create's reply is still on its way.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { CANCEL_REASON, Client } from "../src/index.js";
import { Person } from "./person.js";
import { HoldingProxy } from "./proxy.js";
import { Server, fresh } from "./server.js";

let server: Server;
let person: Person;

before(async () => {
  server = await Server.start();
  person = new Person(server);
});
after(() => server.stop());

async function assertWithdrawn(id: string): Promise<void> {
  const got = await server.interaction(id);
  assert.equal(got.status, "cancelled");
  assert.equal(got.result.reason, CANCEL_REASON);
}

test("abort while waiting", async () => {
  const client = new Client({ url: server.url });
  const q = fresh("Aborted?");
  const asked = person.asked(q);
  const ctl = new AbortController();
  const pending = client.yesNo(q, { signal: ctl.signal });
  const { interaction_id } = await asked;
  ctl.abort();
  await assert.rejects(pending, (e: unknown) => e instanceof Error && e.name === "AbortError");
  await assertWithdrawn(interaction_id);
});

test("abort with a reason of the caller's", async () => {
  const client = new Client({ url: server.url });
  const q = fresh("Aborted with a reason?");
  const asked = person.asked(q);
  const ctl = new AbortController();
  const pending = client.askText(q, { signal: ctl.signal });
  const { interaction_id } = await asked;
  const reason = new Error("the run was stopped");
  ctl.abort(reason);
  await assert.rejects(pending, (e: unknown) => e === reason);
  await assertWithdrawn(interaction_id);
});

test("abort while creating", async () => {
  const proxy = await new HoldingProxy(server.url).listen();
  try {
    const client = new Client({ url: proxy.url });
    const ctl = new AbortController();
    const pending = client.askText(fresh("Aborted before the reply?"), { signal: ctl.signal });
    const held = await proxy.forwarded;
    ctl.abort();
    await assert.rejects(pending, (e: unknown) => e instanceof Error && e.name === "AbortError");
    await assertWithdrawn(held.interaction_id);
  } finally {
    await proxy.close();
  }
});

test("an aborted signal asks nothing", async () => {
  const client = new Client({ url: server.url });
  const q = fresh("Never asked?");
  await assert.rejects(client.askText(q, { signal: AbortSignal.abort() }), (e: unknown) => e instanceof Error && e.name === "AbortError");
  const page = await client.list({ limit: 20 });
  assert.ok(!page.interactions.some((i) => i.question === q));
});
