// Every helper against a real server: the person answers, the agent gets the typed value.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Client, type Interaction } from "../src/index.js";
import { Person } from "./person.js";
import { Server, fresh } from "./server.js";

let server: Server;
let person: Person;
let client: Client;

before(async () => {
  server = await Server.start();
  person = new Person(server);
  client = new Client({ url: server.url, agent: "node-test" });
});
after(() => server.stop());

test("askText", async () => {
  const q = fresh("The one-time code?");
  const reply = person.answer(q, "123456");
  const got: string = await client.askText(q, { context: "Sent to your phone.", timeout: 60 });
  assert.equal(got, "123456");
  const { status, message } = await reply;
  assert.equal(status, 200);
  assert.equal(message.context, "Sent to your phone.");
});

for (const [value, want] of [[true, true], ["approve", true], [false, false], ["reject", false]] as const) {
  test(`yesNo answered ${JSON.stringify(value)}`, async () => {
    const q = fresh("Deploy build 1432?");
    const reply = person.answer(q, value);
    const got: boolean = await client.yesNo(q, { yesLabel: "Deploy", noLabel: "Hold" });
    assert.equal(got, want);
    assert.deepEqual((await reply).message.options.map((o) => o.label), ["Deploy", "Hold"]);
  });
}

test("choice", async () => {
  const q = fresh("Which region first?");
  const reply = person.answer(q, "US East"); // a label: the server maps it to its key
  const got = await client.choice(q, ["EU West", "US East", { key: "ap", label: "Asia Pacific", description: "Tokyo" }]);
  assert.equal(got, "us_east");
  assert.deepEqual((await reply).message.options.map((o) => o.key), ["eu_west", "us_east", "ap"]);
});

test("choices", async () => {
  const q = fresh("Which checks to rerun?");
  void person.answer(q, ["lint", "e2e"]);
  const got = await client.choices(q, [
    { key: "lint", label: "Lint" },
    { key: "unit", label: "Unit" },
    { key: "e2e", label: "End to end" },
  ]);
  assert.deepEqual(got, ["lint", "e2e"]);
});

interface Release {
  version: string;
  replicas: number;
  environment: "staging" | "production";
}

test("form", async () => {
  const schema = {
    type: "object",
    properties: {
      version: { type: "string" },
      replicas: { type: "integer", minimum: 1 },
      environment: { enum: ["staging", "production"] },
    },
    required: ["version", "replicas", "environment"],
    additionalProperties: false,
  };
  const q = fresh("Release details?");
  const reply = person.answer(q, { version: "1.4.0", replicas: 3, environment: "production" });
  const got = await client.form<Release>(q, schema, { default: { version: "1.4.0", replicas: 2, environment: "staging" } });
  assert.deepEqual(got, { version: "1.4.0", replicas: 3, environment: "production" });
  const { message } = await reply;
  assert.deepEqual(message.form_schema, schema);
  assert.deepEqual(message.default_response, { environment: "staging", replicas: 2, version: "1.4.0" });
});

test("several at once", async () => {
  const qs = [fresh("Text?"), fresh("Approve?"), fresh("One?")];
  void person.answer(qs[0]!, "hi");
  void person.answer(qs[1]!, "no");
  void person.answer(qs[2]!, "b");
  const got = await Promise.all([client.askText(qs[0]!), client.yesNo(qs[1]!), client.choice(qs[2]!, ["a", "b"])]);
  assert.deepEqual(got, ["hi", false, "b"]);
});

test("ask returns the whole interaction", async () => {
  const q = fresh("Who answers?");
  void person.answer(q, "approve");
  const got: Interaction<"approval"> = await client.ask({
    interaction_type: "approval",
    question: q,
    metadata: { run: 7 },
    session_id: "s-1",
  });
  const value: boolean | undefined = got.result?.value;
  assert.equal(value, true);
  assert.equal(got.status, "answered");
  assert.equal(got.result?.channel, "api");
  assert.equal(got.source_agent, "node-test");
  assert.deepEqual(got.metadata, { run: 7 });
  assert.match(got.idempotency_key ?? "", /^ask-/, "a key is made per call");
});

test("create, list, get, wait", async () => {
  const q = fresh("Listed?");
  const created = await client.create({ question: q, idempotency_key: q });
  const page = await client.list({ status: "pending", idempotencyKey: q });
  assert.deepEqual(page.interactions.map((i) => i.interaction_id), [created.interaction_id]);
  assert.equal((await client.get(created.interaction_id)).status, "pending");
  const pending = await client.wait(created.interaction_id, { timeout: 0.2 });
  assert.equal(pending.status, "pending", "wait with a timeout hands back a pending interaction");
  void person.answer(q, "yes");
  assert.equal((await client.wait(created.interaction_id)).result?.value, "yes");
});
