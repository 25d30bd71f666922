// LangGraph JS (the real @langchain/langgraph, and langchain's
// humanInTheLoopMiddleware with its scripted fake model): a node
// interrupts, resumeWithHitl asks hitl, a person answers over the HTTP
// API, and the graph resumes with the right answer.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { isDeepStrictEqual } from "node:util";

import { Annotation, END, INTERRUPT, MemorySaver, START, StateGraph, interrupt, isInterrupted } from "@langchain/langgraph";
import { AIMessage, ToolMessage, createAgent, fakeModel, humanInTheLoopMiddleware, tool } from "langchain";
import { z } from "zod";

import { Client } from "../src/index.js";
import { answerInterrupt, resumeWithHitl } from "../src/langgraph.js";
import { camel, cases } from "./cases.js";
import { Person, watchQuestions } from "./person.js";
import { Server, closedPortUrl } from "./server.js";

let server: Server;
let person: Person;
let client: Client;

before(async () => {
  server = await Server.start();
  person = new Person(server);
  client = new Client({ url: server.url, agent: "langgraph-test" });
});
after(() => server.stop());

const State = Annotation.Root({ got: Annotation<unknown[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }) });

/** A graph whose nodes each interrupt with their value and keep what they were resumed with. */
function graphOf(values: Record<string, unknown>) {
  let g: any = new StateGraph(State);
  for (const [name, value] of Object.entries(values)) {
    g = g.addNode(name, () => ({ got: [{ node: name, resumed: interrupt(value) }] })).addEdge(START, name).addEdge(name, END);
  }
  return g.compile({ checkpointer: new MemorySaver() });
}

/** Runs graph to its first interrupt, resumes it through hitl, and returns the final state. */
async function runThrough(graph: any, thread: string, c: Client = client): Promise<{ got: { node: string; resumed: unknown }[] }> {
  const config = { configurable: { thread_id: thread } };
  let state = await graph.invoke({}, config);
  assert.ok(isInterrupted(state), "the graph pauses at the interrupt");
  while (isInterrupted(state)) state = await graph.invoke(await resumeWithHitl(c, state[INTERRUPT]), config);
  return state;
}

for (const tc of cases.human_interrupt) {
  test(`HumanInterrupt: ${tc.name}`, async () => {
    const reply = person.answer(`Run ${tc.interrupt.action_request.action}?`, tc.answer);
    const state = await runThrough(graphOf({ review: tc.interrupt }), `hi-${tc.name}`);
    assert.deepEqual(state.got, [{ node: "review", resumed: [tc.response] }]);
    const { message, status } = await reply;
    assert.equal(status, 200);
    assert.deepEqual((message as any).decisions, tc.decisions);
    assert.equal(message.context, tc.interrupt.description ?? null);
  });
}

test("a list of HumanInterrupts, and two nodes interrupting at once", async () => {
  const [a, b, c] = [cases.human_interrupt[1]!, cases.human_interrupt[2]!, cases.human_interrupt[3]!];
  for (const tc of [a, b, c]) void person.answer(`Run ${tc.interrupt.action_request.action}?`, tc.answer);
  const state = await runThrough(graphOf({ one: [a.interrupt, b.interrupt], two: c.interrupt }), "parallel");
  const byNode = Object.fromEntries(state.got.map((g) => [g.node, g.resumed]));
  assert.deepEqual(byNode, { one: [a.response, b.response], two: [c.response] });
});

test("nobody answers: a response saying so, never an accept", async () => {
  const hi = { ...cases.human_interrupt[0]!.interrupt };
  const out = await answerInterrupt(client, hi, { timeout: 0.2 });
  assert.equal((out as any[])[0].type, "response");
  assert.match((out as any[])[0].args, /^Not done: send_email was not reviewed \(timeout waiting for feedback/);
  const ignoreOnly = { ...hi, config: { allow_accept: true, allow_edit: false, allow_respond: false, allow_ignore: true } };
  assert.deepEqual(await answerInterrupt(new Client({ url: await closedPortUrl() }), ignoreOnly), [{ type: "ignore", args: null }]);
  const acceptOnly = { ...hi, config: { allow_accept: true, allow_edit: false, allow_respond: false, allow_ignore: false } };
  await assert.rejects(answerInterrupt(client, acceptOnly, { timeout: 0.2 }), /timeout waiting for feedback/, "nothing it allows means no");
});

for (const tc of cases.hitl_request) {
  for (const casing of ["snake_case", "camelCase"] as const) {
    test(`HITL middleware request (${casing}): ${tc.name}`, async () => {
      const conv = casing === "camelCase" ? camel : (v: any) => v;
      // The person answers each action by what it asks (the questions come in any order).
      const actions: any[] = tc.request.action_requests;
      const seen: { index: number; decisions: unknown }[] = [];
      const answered = watchQuestions(server, async (m: any) => {
        const index = actions.findIndex((a) => a.name === m.action.name && isDeepStrictEqual(a.args, m.action.args));
        if (index < 0) return false;
        seen.push({ index, decisions: m.decisions });
        await server.request("POST", `/api/v1/interactions/${m.interaction_id}/respond`, { value: tc.answers[index] });
        return seen.length === actions.length;
      });
      const got = await answerInterrupt(client, conv(tc.request), { sourceAgent: `mw-${casing}` });
      await answered;
      assert.deepEqual(got, conv(tc.response));
      seen.sort((a, b) => a.index - b.index);
      assert.deepEqual(seen.map((s) => s.decisions), tc.decisions);
    });
  }
}

test("langchain's humanInTheLoopMiddleware: an edit runs edited, a reject does not run", async () => {
  const wrote: unknown[] = [];
  const ran: string[] = [];
  const writeFile = tool(
    async (args: { path: string; content: string }) => {
      wrote.push(args);
      return `wrote ${args.path}`;
    },
    { name: "write_file", description: "Write a file", schema: z.object({ path: z.string(), content: z.string() }) },
  );
  const executeSql = tool(
    async ({ query }: { query: string }) => {
      ran.push(query);
      return "ok";
    },
    { name: "execute_sql", description: "Run SQL", schema: z.object({ query: z.string() }) },
  );
  // Two turns, one call each: in langchain JS, a reject in a batch also
  // drops the batch's other calls and goes back to the model.
  const model = fakeModel()
    .respondWithTools([{ name: "write_file", args: { path: "notes/plan.md", content: "# Plan" }, id: "call-1" }])
    .respondWithTools([{ name: "execute_sql", args: { query: "DELETE FROM orders" }, id: "call-2" }])
    .respond(new AIMessage("Done."));
  const agent: any = createAgent({
    model,
    tools: [writeFile, executeSql],
    // Cast: langchain's middleware types do not compile under exactOptionalPropertyTypes.
    middleware: [(humanInTheLoopMiddleware as any)({ interruptOn: { write_file: true, execute_sql: { allowedDecisions: ["approve", "reject"] } } })],
    checkpointer: new MemorySaver(),
  });
  const config = { configurable: { thread_id: "middleware" } };
  void person.answer("Run write_file?", { decision: "edit", args: { path: "notes/plan-v2.md", content: "# Plan" } });
  void person.answer("Run execute_sql?", { decision: "reject", message: "not without a backup" });
  let state: any = await agent.invoke({ messages: [{ role: "user", content: "Plan, and clean up old orders" }] }, config);
  const requests: unknown[] = [];
  while (isInterrupted(state)) {
    requests.push(state[INTERRUPT][0]!.value);
    state = await agent.invoke(await resumeWithHitl(client, state[INTERRUPT]), config);
  }
  assert.deepEqual(requests.map((r: any) => Object.keys(r).sort()), [["actionRequests", "reviewConfigs"], ["actionRequests", "reviewConfigs"]], "langchain JS writes the request in camelCase");
  assert.deepEqual(wrote, [{ path: "notes/plan-v2.md", content: "# Plan" }], "the edit ran as edited");
  assert.deepEqual(ran, [], "the rejected query never ran");
  const tools = state.messages.filter((m: unknown) => ToolMessage.isInstance(m)).map((m: ToolMessage) => [m.name, m.content]);
  assert.deepEqual(tools, [
    ["write_file", "wrote notes/plan-v2.md"],
    ["execute_sql", "not without a backup"],
  ]);
  assert.equal(state.messages.at(-1).content, "Done.");
});
