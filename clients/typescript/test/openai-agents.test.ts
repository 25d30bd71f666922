// The OpenAI Agents SDK (the real @openai/agents, with a scripted Model
// that calls a tool that needs approval): reviewInterruptions asks hitl,
// a person answers over the HTTP API, and the run goes on with the right
// decision.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Agent, Usage, run, setTracingDisabled, tool, type Model, type ModelRequest, type ModelResponse } from "@openai/agents";
import { z } from "zod";

import { Client } from "../src/index.js";
import { reviewInterruptions } from "../src/openai-agents.js";
import { Person } from "./person.js";
import { Server, closedPortUrl } from "./server.js";

let server: Server;
let person: Person;
let client: Client;

before(async () => {
  setTracingDisabled(true); // no network: nothing is exported
  server = await Server.start();
  person = new Person(server);
  client = new Client({ url: server.url, agent: "openai-agents-test" });
});
after(() => server.stop());

/** A model that calls bash with command, then says it is done; it keeps the requests it got. */
class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  constructor(readonly command: string) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    if (this.requests.length === 1) {
      return { usage: new Usage(), output: [{ type: "function_call", callId: "call-1", name: "bash", arguments: JSON.stringify({ command: this.command }), status: "completed" }] };
    }
    return { usage: new Usage(), output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "done" }] }] };
  }

  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("not streamed in these tests");
  }
}

/** One agent run through its approvals; what ran, and what the model read about the call. */
async function runAgent(command: string, hitl: Client, opts = {}) {
  const ran: string[] = [];
  const bash = tool({
    name: "bash",
    description: "Run a shell command",
    parameters: z.object({ command: z.string() }),
    needsApproval: true,
    execute: async ({ command }) => {
      ran.push(command);
      return `ran ${command}`;
    },
  });
  const model = new ScriptedModel(command);
  const agent = new Agent({ name: "deployer", instructions: "Deploy.", model, tools: [bash] });
  let result = await run(agent, "Deploy the release");
  assert.equal(result.interruptions.length, 1, "the SDK stops for approval");
  assert.deepEqual(ran, []);
  const verdicts = [];
  while (result.interruptions.length > 0) {
    verdicts.push(...(await reviewInterruptions(hitl, result, opts)));
    result = await run(agent, result.state);
  }
  const input = model.requests.at(-1)!.input;
  const output = Array.isArray(input) ? input.find((i: any) => i.type === "function_call_result") : undefined;
  return { ran, verdicts, output: (output as any)?.output, final: result.finalOutput };
}

test("approve: the tool runs", async () => {
  const reply = person.answer("Run bash?", { decision: "approve" });
  const got = await runAgent("make deploy", client);
  assert.deepEqual(got.ran, ["make deploy"]);
  assert.deepEqual(got.verdicts, [{ approved: true, message: "" }]);
  assert.equal(got.final, "done");
  const { message } = await reply;
  assert.deepEqual((message as any).action.args, { command: "make deploy" });
  assert.deepEqual((message as any).decisions, ["approve", "reject", "respond"], "no edit: the SDK cannot run other arguments");
});

test("reject with a reason: the tool does not run and the model reads why", async () => {
  void person.answer("Run bash?", { decision: "reject", message: "not on a Friday" });
  const got = await runAgent("make deploy", client);
  assert.deepEqual(got.ran, []);
  assert.deepEqual(got.verdicts, [{ approved: false, message: "A person rejected bash: not on a Friday" }]);
  assert.deepEqual(got.output, { type: "text", text: "A person rejected bash: not on a Friday" });
});

test("respond: the tool does not run and the model reads the reply", async () => {
  void person.answer("Run bash?", { decision: "respond", message: "run make check first" });
  const got = await runAgent("make deploy", client);
  assert.deepEqual(got.ran, []);
  assert.equal(got.output?.text, "A person answered instead of running bash: run make check first");
});

test("nobody answers, or hitl is down: rejected with the reason, never run", async () => {
  const expired = await runAgent("make deploy", client, { timeout: 0.2 });
  assert.deepEqual(expired.ran, []);
  assert.match(expired.verdicts[0]!.message, /^Not run: bash was not reviewed \(timeout waiting for feedback/);
  const down = await runAgent("make deploy", new Client({ url: await closedPortUrl() }));
  assert.deepEqual(down.ran, []);
  assert.match(down.verdicts[0]!.message, /^Not run: bash was not reviewed \(POST http:/);
  assert.match(down.output?.text, /^Not run: bash was not reviewed/);
});
