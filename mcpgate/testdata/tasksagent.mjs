// tasksagent.mjs is an MCP agent that calls tools through the official
// Tasks extension package (npm @modelcontextprotocol/ext-tasks, its
// requester session over the SDK 2 client @modelcontextprotocol/client)
// over Streamable HTTP to the URL in its first argument; AGENT_TOKEN, if
// set, is sent as a bearer token. It reads one JSON operation a line on
// stdin and writes one JSON line per outcome on stdout:
//
//   {"id": 1, "op": "call", "name": …, "args": {…}}
//       → {"event": "handle", "id": 1, "handle": {taskId, …}} once the call
//         runs as a task, then {"id": 1, "result": {outcome}} when it settles
//   {"id": 2, "op": "cancel", "taskId": …}  → {"id": 2, "result": {}}
//   {"id": 3, "op": "list"}                  → {"id": 3, "result": {tasks…}}
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";
import readline from "node:readline";

const out = (v) => process.stdout.write(JSON.stringify(v) + "\n");
const token = process.env.AGENT_TOKEN;
const client = new Client({ name: "ext-tasks-agent", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2]),
  token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : undefined));
const session = createTaskSessionFromClient(client, { endpointId: "hitl" });
out({ event: "ready", era: client.getProtocolEra() });

const run = async (op) => {
  switch (op.op) {
    case "call": {
      const execution = await session.callTool(op.name, op.args ?? {}, { task: { preference: "prefer" } });
      out({ event: "handle", id: op.id, handle: execution.handle ?? null });
      const { outcome } = await execution.settle();
      return outcome.status === "failed" ? { status: "failed", error: String(outcome.error?.message ?? outcome.error) } : outcome;
    }
    case "cancel":
      await session.cancelTask(op.taskId);
      return {};
    case "list":
      return session.listTasks();
  }
  throw new Error("unknown op " + op.op);
};
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const op = JSON.parse(line);
  run(op).then(
    (result) => out({ id: op.id, result }),
    (err) => out({ id: op.id, error: String(err?.message ?? err) }),
  );
}).on("close", async () => {
  await session.close();
  await client.close();
  process.exit(0);
});
