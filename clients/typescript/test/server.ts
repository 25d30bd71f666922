/**
 * A real hitl server for the tests: the repository's own `hitl serve`
 * (HITL_BIN, or built here with `go build`), on a free port, over a temp
 * SQLite file.
 */

import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
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
