/**
 * A real hitl server for the tests, and a person who answers it.
 *
 * The server is the repository's own `hitl serve` (HITL_BIN, or built here
 * with `go build`), on a free port, over a temp SQLite file. The person
 * watches the server's event stream (`/api/v1/events`) for a question and
 * answers or cancels it over the HTTP API, as the web inbox would: the
 * tests wait on that signal, never on a sleep.
 */

import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

/** The repository's root (this file runs from clients/typescript/build/test). */
export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");
/** The package's directory. */
export const PACKAGE = join(REPO, "clients", "typescript");
/** How long a test waits for something the server does at once, in ms. */
export const PATIENCE = 30_000;

// Keep a developer's own server settings out of the tests.
for (const name of ["HITL_URL", "HITL_TOKEN", "HITL_AGENT"]) delete process.env[name];

let built: string | undefined;

/** Returns the hitl binary: HITL_BIN, or one built from the repository. */
export function hitlBin(): string {
  if (process.env["HITL_BIN"]) return process.env["HITL_BIN"];
  if (!built) {
    built = join(mkdtempSync(join(tmpdir(), "hitl-bin-")), "hitl");
    execFileSync("go", ["build", "-o", built, "./cmd/hitl"], { cwd: REPO, stdio: "inherit" });
  }
  return built;
}

/** Returns a fresh temp SQLite path. */
export function tempDb(): string {
  return join(mkdtempSync(join(tmpdir(), "hitl-db-")), "hitl.db");
}

/** Creates an API token in the database and returns its secret. */
export function makeToken(db: string, name: string, role: string): string {
  return execFileSync(hitlBin(), ["token", "create", "--name", name, "--role", role, "--db", db], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  }).trim();
}

/** Returns a question with a unique tag, so a test finds its own question. */
export function fresh(question: string): string {
  return `${question} [${randomUUID().slice(0, 10)}]`;
}

/** Returns the URL of a local port nothing listens on. */
export async function closedPortUrl(): Promise<string> {
  const srv = net.createServer();
  await new Promise<void>((ok) => srv.listen(0, "127.0.0.1", ok));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((ok) => srv.close(() => ok()));
  return `http://127.0.0.1:${port}`;
}

/** A JSON response from the server, read straight (not through the client under test). */
export interface Reply {
  status: number;
  body: any;
}

/** One running `hitl serve`. */
export class Server {
  url = "";
  readonly logs: string[] = [];
  readonly #proc: ChildProcess;
  readonly #exited: Promise<void>;

  private constructor(db: string, addr: string) {
    this.#proc = spawn(hitlBin(), ["serve", "--addr", addr, "--db", db, "--log-format", "json"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    this.#exited = new Promise((ok) => this.#proc.once("exit", () => ok()));
  }

  /** Starts a server over db (a fresh one by default) and resolves once it is ready. */
  static async start(db = tempDb(), addr = "127.0.0.1:0"): Promise<Server> {
    const srv = new Server(db, addr);
    await new Promise<void>((ok, fail) => {
      // Read stderr to the end, so the server never blocks on a full pipe.
      const lines = createInterface({ input: srv.#proc.stderr! });
      lines.on("line", (line) => {
        srv.logs.push(line);
        try {
          const doc = JSON.parse(line) as { msg?: string; url?: string };
          if (doc.msg === "hitl listening" && doc.url) {
            srv.url = doc.url;
            ok();
          }
        } catch {
          // not a log record
        }
      });
      void srv.#exited.then(() => fail(new Error(`hitl serve exited:\n${srv.logs.join("\n")}`)));
    });
    const ready = await srv.request("GET", "/readyz");
    if (ready.status !== 200) throw new Error(`/readyz: ${ready.status}`);
    return srv;
  }

  /** The host:port the server listens on. */
  get addr(): string {
    return this.url.replace("http://", "");
  }

  /** Shuts the server down gracefully and waits for it to exit. */
  async stop(): Promise<void> {
    if (this.#proc.exitCode === null) this.#proc.kill("SIGTERM");
    await this.#exited;
  }

  /** Sends one request straight to the server. */
  async request(method: string, path: string, body?: unknown, token?: string): Promise<Reply> {
    const headers: Record<string, string> = {};
    if (token) headers["Authorization"] = `Bearer ${token}`;
    const init: RequestInit = { method, headers };
    if (body !== undefined) init.body = JSON.stringify(body);
    const res = await fetch(this.url + path, init);
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }

  /** Returns the interaction as the server has it now. */
  async interaction(id: string): Promise<any> {
    const r = await this.request("GET", `/api/v1/interactions/${id}`);
    if (r.status !== 200) throw new Error(`get ${id}: ${r.status}`);
    return r.body;
  }
}

/** A hitl:question payload. */
export interface QuestionMessage {
  interaction_id: string;
  interaction_type: string;
  question: string;
  context: string | null;
  options: { key: string; label: string }[];
  form_schema: any;
  default_response: unknown;
}

/**
 * Reads the server's event stream and calls onQuestion for every
 * hitl:question until it returns true or the stream ends.
 */
export async function watchQuestions(server: Server, onQuestion: (m: QuestionMessage) => boolean | Promise<boolean>, token?: string): Promise<void> {
  const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  const ctl = new AbortController();
  const res = await fetch(server.url + "/api/v1/events", { headers, signal: ctl.signal });
  if (!res.body) throw new Error(`event stream: ${res.status}`);
  const decoder = new TextDecoder();
  let buffered = "";
  let event = "";
  try {
    for await (const chunk of res.body) {
      buffered += decoder.decode(chunk as Uint8Array, { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl).replace(/\r$/, "");
        buffered = buffered.slice(nl + 1);
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:") && event === "hitl:question") {
          if (await onQuestion(JSON.parse(line.slice(5)) as QuestionMessage)) return;
        }
      }
    }
  } finally {
    ctl.abort();
  }
}

/** Answers questions on the server as a person in the web inbox would. */
export class Person {
  constructor(
    readonly server: Server,
    readonly token?: string,
  ) {}

  /** Resolves with the question containing text once it has been asked. */
  asked(text: string): Promise<QuestionMessage> {
    let found: QuestionMessage | undefined;
    const done = watchQuestions(this.server, (m) => {
      if (!m.question.includes(text)) return false;
      found = m;
      return true;
    }, this.token);
    return withPatience(
      done.then(() => {
        if (!found) throw new Error(`event stream ended before ${JSON.stringify(text)} was asked`);
        return found;
      }),
      `nobody asked ${JSON.stringify(text)}`,
    );
  }

  /** Answers the question containing text with value once it is asked; resolves with the server's reply. */
  async answer(text: string, value: unknown): Promise<Reply & { message: QuestionMessage }> {
    const message = await this.asked(text);
    const reply = await this.server.request("POST", `/api/v1/interactions/${message.interaction_id}/respond`, { value }, this.token);
    return { ...reply, message };
  }

  /** Cancels the question containing text once it is asked. */
  async cancel(text: string, reason: string): Promise<Reply> {
    const message = await this.asked(text);
    return this.server.request("POST", `/api/v1/interactions/${message.interaction_id}/cancel`, { reason }, this.token);
  }
}

/** Rejects with message when p takes longer than PATIENCE. */
function withPatience<T>(p: Promise<T>, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(message)), PATIENCE);
    timer.unref();
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** Returns a valid answer to a hitl:question: approve, the first option, or a form filled in from its schema. */
export function sampleAnswer(m: QuestionMessage): unknown {
  const keys = m.options.map((o) => o.key);
  switch (m.interaction_type) {
    case "approval":
      return true;
    case "single_choice":
      return keys[0];
    case "multi_choice":
      return keys.slice(0, 1);
    case "form":
      return sample(m.form_schema);
  }
  return "an answer";
}

function sample(schema: any): unknown {
  if ("default" in schema) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  switch (schema.type) {
    case "object":
      return Object.fromEntries((schema.required ?? []).map((k: string) => [k, sample(schema.properties[k])]));
    case "array":
      return [];
    case "string":
      return schema.format === "date" ? "2025-01-02" : "text";
    case "integer":
      return 1;
    case "number":
      return 1.5;
    case "boolean":
      return true;
  }
  return null;
}

/** Answers every question the server is asked, at once, with sampleAnswer. */
export function autoAnswer(server: Server): void {
  void watchQuestions(server, async (m) => {
    await server.request("POST", `/api/v1/interactions/${m.interaction_id}/respond`, { value: sampleAnswer(m) });
    return false;
  }).catch(() => {
    // the server stopped
  });
}

/**
 * Forwards every request to the server, but holds back the reply to the
 * first one: the server has done it (a create has stored its question) and
 * the client is still waiting, so a test can abort at that moment.
 */
export class HoldingProxy {
  url = "";
  held: any;
  readonly forwarded: Promise<any>;
  #release!: () => void;
  readonly #released = new Promise<void>((ok) => (this.#release = ok));
  #first = true;
  readonly #srv: http.Server;

  constructor(readonly upstream: string) {
    let onForwarded!: (v: any) => void;
    this.forwarded = new Promise((ok) => (onForwarded = ok));
    this.#srv = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const headers: Record<string, string> = {};
      for (const name of ["content-type", "authorization"]) {
        const v = req.headers[name];
        if (typeof v === "string") headers[name] = v;
      }
      const init: RequestInit = { method: req.method ?? "GET", headers };
      if (chunks.length) init.body = Buffer.concat(chunks);
      const up = await fetch(this.upstream + (req.url ?? "/"), init);
      const body = await up.text();
      if (this.#first) {
        this.#first = false;
        this.held = JSON.parse(body);
        onForwarded(this.held);
        await this.#released;
      }
      res.writeHead(up.status, { "Content-Type": "application/json" });
      res.end(body);
    });
  }

  /** Starts listening. */
  async listen(): Promise<this> {
    await new Promise<void>((ok) => this.#srv.listen(0, "127.0.0.1", ok));
    this.url = `http://127.0.0.1:${(this.#srv.address() as net.AddressInfo).port}`;
    return this;
  }

  /** Releases the held reply and stops the proxy. */
  async close(): Promise<void> {
    this.#release();
    this.#srv.closeAllConnections();
    await new Promise<void>((ok) => this.#srv.close(() => ok()));
  }
}
