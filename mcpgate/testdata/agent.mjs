// agent.mjs is an MCP agent for hitl's MCP tests (the gate's, and the tasks of
// hitl's own MCP server): the official TypeScript
// SDK's client over stdio to the command in its arguments, or over
// Streamable HTTP to the URL that is its first argument. It reads one
// JSON operation a line on stdin and writes one JSON line per outcome on
// stdout:
//
//   {"id": 1, "op": "list"}                         → {"id": 1, "result": {tools…}}
//   {"id": 2, "op": "call", "name": …, "args": {…}}  → {"id": 2, "result": {…}} (or "error")
//   {"id": 3, "op": "abort", "target": 2}           aborts call 2 (its outcome is an error)
//
// and {"event": "progress", "id": …} for progress, {"event": "elicit", …}
// for elicitations. With AGENT_ELICIT set to a JSON elicitation result it
// declares form elicitation and answers every one with it. AGENT_TOKEN,
// if set, is sent as a bearer token over HTTP.
//
// Tasks, through the SDK's experimental task client:
//
//   {"id": 4, "op": "task", "name": …, "args": {…}, "ttl": 60000}
//       → {"id": 4, "result": {task…}} as soon as the task is created, then
//         {"event": "stream", "id": 4, "message": {…}} for each later
//         message of callToolStream (taskStatus, result, error)
//   {"id": 5, "op": "getTask" | "taskResult" | "cancelTask", "taskId": …}
//   {"id": 6, "op": "listTasks", "cursor": …}
//
// and {"event": "taskStatus", "params": {…}} for notifications/tasks/status.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, ElicitRequestSchema, TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import readline from "node:readline";

const out = (v) => process.stdout.write(JSON.stringify(v) + "\n");
const [command, ...args] = process.argv.slice(2);
const elicit = process.env.AGENT_ELICIT;
const client = new Client(
  { name: "ts-agent", version: "1.0.0" },
  { capabilities: elicit ? { elicitation: { form: {} } } : {} },
);
if (elicit) {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    out({ event: "elicit", params: req.params });
    return JSON.parse(elicit);
  });
}
client.setNotificationHandler(TaskStatusNotificationSchema, (n) => out({ event: "taskStatus", params: n.params }));
const token = process.env.AGENT_TOKEN;
const transport = /^https?:\/\//.test(command)
  ? new StreamableHTTPClientTransport(new URL(command), token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : undefined)
  : new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
await client.connect(transport);
out({ event: "ready", server: client.getServerVersion(), protocol: transport.protocolVersion ?? null });

const aborts = new Map();
const run = async (op) => {
  switch (op.op) {
    case "list":
      return client.listTools();
    case "call": {
      const ac = new AbortController();
      aborts.set(op.id, ac);
      return client.callTool({ name: op.name, arguments: op.args ?? {} }, undefined, {
        signal: ac.signal,
        timeout: 120000,
        resetTimeoutOnProgress: true,
        onprogress: (p) => out({ event: "progress", id: op.id, progress: p }),
      });
    }
    case "task": {
      const stream = client.experimental.tasks.callToolStream(
        { name: op.name, arguments: op.args ?? {} },
        CallToolResultSchema,
        { task: op.ttl ? { ttl: op.ttl } : {}, timeout: 120000 },
      );
      const first = await stream.next();
      (async () => {
        for await (const message of stream) {
          out({ event: "stream", id: op.id, message: message.type === "error" ? { type: "error", error: String(message.error?.message ?? message.error) } : message });
        }
      })();
      if (first.value?.type !== "taskCreated") {
        throw new Error("no task: " + JSON.stringify(first.value?.error?.message ?? first.value));
      }
      return first.value.task;
    }
    case "getTask":
      return client.experimental.tasks.getTask(op.taskId);
    case "taskResult":
      return client.experimental.tasks.getTaskResult(op.taskId, CallToolResultSchema, { timeout: 120000 });
    case "cancelTask":
      return client.experimental.tasks.cancelTask(op.taskId);
    case "listTasks":
      return client.experimental.tasks.listTasks(op.cursor);
    case "capabilities":
      return client.getServerCapabilities();
    case "abort":
      aborts.get(op.target)?.abort("the agent gave up");
      return {};
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
  await client.close();
  process.exit(0);
});
