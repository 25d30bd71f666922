// agent.mjs is an MCP agent for the gate's tests: the official TypeScript
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
// declares form elicitation and answers every one with it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
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
const transport = /^https?:\/\//.test(command)
  ? new StreamableHTTPClientTransport(new URL(command))
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
