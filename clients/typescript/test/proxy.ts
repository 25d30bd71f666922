// A proxy that holds back a reply, to interrupt a client at that moment.

import http from "node:http";
import type net from "node:net";

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
