// The Vercel AI SDK (the real `ai` package, with its mock language model
// scripted to call a tool that needs approval): reviewToolApprovals routes
// the approval to hitl, a person answers over the HTTP API, and the run
// goes on with the right decision.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { generateText, tool, type ModelMessage } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";

import { reviewToolApprovals } from "../src/ai.js";
import { Client } from "../src/index.js";
import { Person } from "./person.js";
import { Server, closedPortUrl } from "./server.js";

let server: Server;
let person: Person;
let client: Client;

before(async () => {
  server = await Server.start();
  person = new Person(server);
  client = new Client({ url: server.url });
});
after(() => server.stop());

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** One agent run: a model that calls bash with command, then says it is done; what ran; what the model read. */
async function run(command: string, review: (messages: ModelMessage[]) => Promise<ModelMessage[]>) {
  const ran: string[] = [];
  const model = new MockLanguageModelV3({
    doGenerate: async (opts) => {
      if (model.doGenerateCalls.length === 1) {
        return {
          content: [{ type: "tool-call", toolCallId: "call-1", toolName: "bash", input: JSON.stringify({ command }) }],
          finishReason: { unified: "tool-calls", raw: undefined },
          usage,
          warnings: [],
        };
      }
      return { content: [{ type: "text", text: `done after ${opts.prompt.length} messages` }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] };
    },
  });
  const tools = {
    bash: tool({
      description: "Run a shell command",
      inputSchema: z.object({ command: z.string().min(1) }),
      needsApproval: true,
      execute: async ({ command }) => {
        ran.push(command);
        return `ran ${command}`;
      },
    }),
  };
  const messages: ModelMessage[] = [{ role: "user", content: "Deploy the release" }];
  const first = await generateText({ model, tools, messages });
  const requests = first.content.filter((p) => p.type === "tool-approval-request");
  assert.equal(requests.length, 1, "the SDK asks for approval instead of running the tool");
  assert.deepEqual(ran, []);
  messages.push(...first.response.messages);
  const second = await generateText({ model, tools, messages: await review(messages) });
  // What the model read about the call: the tool's output, or why it did not run.
  const prompt = model.doGenerateCalls[1]!.prompt;
  const result = prompt.flatMap((m) => (m.role === "tool" ? m.content : [])).find((p) => p.type === "tool-result");
  return { ran, output: result?.type === "tool-result" ? result.output : undefined, text: second.text };
}

test("approve: the tool runs as proposed", async () => {
  const reply = person.answer("Run bash?", { decision: "approve" });
  const got = await run("make deploy", (m) => reviewToolApprovals(client, m, { sourceAgent: "ai-sdk" }));
  assert.deepEqual(got.ran, ["make deploy"]);
  assert.deepEqual(got.output, { type: "text", value: "ran make deploy" });
  const { message } = await reply;
  assert.deepEqual((message as any).action.args, { command: "make deploy" });
});

test("edit: the tool runs with the person's input", async () => {
  void person.answer("Run bash?", { decision: "edit", args: { command: "make deploy-staging" } });
  const got = await run("make deploy", (m) => reviewToolApprovals(client, m));
  assert.deepEqual(got.ran, ["make deploy-staging"]);
  assert.deepEqual(got.output, { type: "text", value: "ran make deploy-staging" });
});

test("reject with a reason: the tool does not run and the model reads why", async () => {
  void person.answer("Run bash?", { decision: "reject", message: "not on a Friday" });
  const got = await run("make deploy", (m) => reviewToolApprovals(client, m));
  assert.deepEqual(got.ran, []);
  assert.deepEqual(got.output, { type: "execution-denied", reason: "A person rejected bash: not on a Friday" });
});

test("respond: the tool does not run and the model reads the reply", async () => {
  void person.answer("Run bash?", { decision: "respond", message: "run make check first" });
  const got = await run("make deploy", (m) => reviewToolApprovals(client, m, { decisions: ["approve", "reject", "respond"] }));
  assert.deepEqual(got.ran, []);
  assert.deepEqual(got.output, { type: "execution-denied", reason: "A person answered instead of running bash: run make check first" });
});

test("nobody answers: denied with the reason, never run", async () => {
  const got = await run("make deploy", (m) => reviewToolApprovals(client, m, { timeout: 0.2 }));
  assert.deepEqual(got.ran, []);
  assert.equal(got.output?.type, "execution-denied");
  assert.match((got.output as { reason: string }).reason, /^Not run: bash was not reviewed \(timeout waiting for feedback: /);
});

test("hitl unreachable: denied with the reason, never run", async () => {
  const down = new Client({ url: await closedPortUrl() });
  const got = await run("make deploy", (m) => reviewToolApprovals(down, m));
  assert.deepEqual(got.ran, []);
  assert.match((got.output as { reason: string }).reason, /^Not run: bash was not reviewed \(POST http:\/\/127\.0\.0\.1:\d+\/api\/v1\/interactions: /);
});

test("nothing pending: the messages as they are", async () => {
  const messages: ModelMessage[] = [{ role: "user", content: "hi" }];
  assert.deepEqual(await reviewToolApprovals(client, messages), messages);
});
