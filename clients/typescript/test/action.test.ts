// Action review against a real server: the person approves, edits, rejects
// or responds, and the agent gets the decision with the arguments to run.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Client, Expired, type ActionAnswer, type ActionDecision } from "../src/index.js";
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

interface Bash {
  command: string;
  timeout?: number;
}

const bashSchema = {
  type: "object",
  properties: { command: { type: "string", minLength: 1 }, timeout: { type: "integer" } },
  required: ["command"],
  additionalProperties: false,
};

test("approve runs the proposed arguments", async () => {
  const q = fresh("Run the tests?");
  const reply = person.answer(q, { decision: "approve" });
  const got = await client.reviewAction<Bash>("Bash", { command: "make test" }, { question: q, description: "Run the suite" });
  assert.equal(got.decision, "approve");
  assert.equal(got.run, true);
  assert.deepEqual(got.args, { command: "make test" });
  assert.equal(got.message, "");
  assert.equal(got.ruleId, undefined);
  const { message } = await reply;
  assert.equal(message.interaction_type, "action");
  assert.deepEqual((message as any).action, { name: "Bash", args: { command: "make test" }, description: "Run the suite" });
  assert.deepEqual((message as any).decisions, ["approve", "edit", "reject", "respond"]);
});

test("edit runs the person's arguments, valid against the schema", async () => {
  const q = fresh("Deploy?");
  const asked = person.asked(q);
  const pending = client.reviewAction<Bash>("Bash", { command: "make deploy" }, { question: q, argsSchema: bashSchema });
  const { interaction_id } = await asked;
  // An edit the schema refuses is not recorded: 422, and the question stays open.
  const bad = await server.request("POST", `/api/v1/interactions/${interaction_id}/respond`, { value: { decision: "edit", args: { command: "" } } });
  assert.equal(bad.status, 422);
  assert.match(bad.body.error.message, /command/);
  const good = await server.request("POST", `/api/v1/interactions/${interaction_id}/respond`, {
    value: { decision: "edit", args: { command: "make deploy-staging", timeout: 600 } },
  });
  assert.equal(good.status, 200);
  const got = await pending;
  assert.equal(got.decision, "edit");
  assert.ok(got.run);
  const args: Bash = got.args;
  assert.deepEqual(args, { command: "make deploy-staging", timeout: 600 });
  assert.deepEqual(got.interaction.result?.args_diff, [
    { op: "replace", path: "/command", value: "make deploy-staging" },
    { op: "add", path: "/timeout", value: 600 },
  ]);
});

for (const [answer, decision, message] of [
  [{ decision: "reject", message: "not on a Friday" }, "reject", "not on a Friday"],
  [{ decision: "reject" }, "reject", ""],
  ["deny", "reject", ""],
  [{ decision: "respond", message: "run make check first" }, "respond", "run make check first"],
] as const) {
  test(`${JSON.stringify(answer)} does not run`, async () => {
    const q = fresh("Drop the table?");
    void person.answer(q, answer);
    const got = await client.reviewAction("psql", { sql: "DROP TABLE users" }, { question: q });
    assert.equal(got.decision, decision);
    assert.equal(got.run, false);
    assert.equal(got.args, undefined);
    assert.equal(got.message, message);
  });
}

test("only the decisions allowed", async () => {
  const q = fresh("Send the mail?");
  const asked = person.asked(q);
  const pending = client.reviewAction("send_email", { to: "ops@example.com" }, {
    question: q,
    decisions: ["approve", "reject"],
    rejectRequiresMessage: true,
  });
  const { interaction_id } = await asked;
  const respond = (value: unknown) => server.request("POST", `/api/v1/interactions/${interaction_id}/respond`, { value });
  const edit = await respond({ decision: "edit", args: { to: "me@example.com" } });
  assert.equal(edit.status, 422);
  assert.equal(edit.body.error.message, "edit is not allowed for this action; allowed: approve, reject");
  const bare = await respond({ decision: "reject" });
  assert.equal(bare.status, 422, "a reject needs its reason");
  assert.equal((await respond({ decision: "reject", message: "wrong list" })).status, 200);
  const got = await pending;
  assert.deepEqual([got.decision, got.message], ["reject", "wrong list"]);
});

test("always: the person's answer makes a rule that decides the next call", async () => {
  const agent = fresh("rule-bot").replace(/\W+/g, "-");
  const bot = new Client({ url: server.url, agent });
  const q = fresh("git status?");
  const answer: ActionAnswer<Bash> = { decision: "approve", always: { match: { arg: "command", prefix: "git status" }, ttl_seconds: 3600 } };
  const reply = person.answer(q, answer);
  const first = await bot.reviewAction<Bash>("Bash", { command: "git status" }, { question: q });
  assert.equal(first.decision, "approve");
  assert.equal(first.ruleId, undefined, "a person decided the first");
  assert.equal((await reply).status, 200);

  // No one is asked: the rule approves at once, and says so.
  const second = await bot.reviewAction<Bash>("Bash", { command: "git status --short" });
  assert.equal(second.decision, "approve");
  assert.ok(second.ruleId, "the rule decided");
  assert.equal(second.interaction.result?.channel, "rule");
  assert.deepEqual(second.args, { command: "git status --short" });
  const rule = await server.request("GET", `/api/v1/rules/${second.ruleId}`);
  assert.equal(rule.body.interaction_id, first.interaction.interaction_id);

  // The prefix never matches shell control syntax: a person is asked.
  const q3 = fresh("git status; rm?");
  void person.answer(q3, { decision: "reject", message: "no" });
  const third = await bot.reviewAction<Bash>("Bash", { command: "git status; rm -rf /" }, { question: q3 });
  assert.equal(third.decision, "reject");
});

test("nobody answers: Expired, never a decision to run", async () => {
  await assert.rejects(client.reviewAction("Bash", { command: "make deploy" }, { timeout: 0.2 }), Expired);
});

test("the default decision at the deadline", async () => {
  const got = await client.reviewAction("Bash", { command: "make deploy" }, {
    timeout: 0.2,
    default: { decision: "reject", message: "nobody reviewed it" },
    defaultOnTimeout: true,
  });
  assert.deepEqual([got.decision, got.message, got.interaction.result?.timed_out], ["reject", "nobody reviewed it", true]);
});

// Never called: only compiled (a wrong type fails the run).
export function typed(d: ActionDecision<Bash>): string {
  if (d.run) return d.args.command; // args is a Bash when it runs
  // @ts-expect-error: no args when it does not run
  return d.args.command + d.message;
}
