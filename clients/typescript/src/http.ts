/**
 * One HTTP request to the server, over the global fetch.
 * @module
 */

import { HitlError, Unreachable, errorFromResponse } from "./errors.js";

/** Where the client looks for the server when neither `url` nor HITL_URL is given. */
export const DEFAULT_URL = "http://127.0.0.1:7878";

/** The package version, sent in the User-Agent header. */
export const VERSION = "0.1.0";

/** Reads an environment variable where the runtime has process.env; "" is unset. */
export function env(name: string): string | undefined {
  const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  const value = proc?.env?.[name];
  return value ? value : undefined;
}

/** Per-request settings. */
export interface RequestOptions {
  /** Aborting it aborts the request, which rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  /** Seconds before the request is given up as unreachable. */
  timeout?: number | undefined;
}

/** Sends requests to one server: JSON in and out, the bearer token, and failures as the client's errors. */
export class Transport {
  /** The server's address, without a trailing slash. */
  readonly baseUrl: string;
  readonly #token: string | undefined;
  readonly #fetch: typeof fetch;
  readonly #timeout: number;

  constructor(url: string | undefined, token: string | undefined, fetchImpl: typeof fetch | undefined, timeout: number) {
    const base = url ?? env("HITL_URL") ?? DEFAULT_URL;
    let parsed: URL;
    try {
      parsed = new URL(base);
    } catch {
      throw new TypeError(`hitl: server URL must be http:// or https://, got ${JSON.stringify(base)}`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new TypeError(`hitl: server URL must be http:// or https://, got ${JSON.stringify(base)}`);
    }
    this.baseUrl = base.replace(/\/+$/, "");
    this.#token = token ?? env("HITL_TOKEN");
    this.#fetch = fetchImpl ?? globalThis.fetch.bind(globalThis);
    this.#timeout = timeout;
  }

  /**
   * Sends one request and returns the decoded JSON body. A refused request
   * throws the server's error (the {@link HitlError} subclass of its code);
   * no complete response throws {@link Unreachable}; an aborted signal
   * rejects with its reason.
   */
  async request<R>(method: string, path: string, body?: unknown, opts: RequestOptions = {}): Promise<R> {
    const { signal } = opts;
    signal?.throwIfAborted();
    const where = `${method} ${this.baseUrl}${path.split("?")[0]}`;
    const headers: Record<string, string> = {
      Accept: "application/json",
      "User-Agent": `hitl-typescript/${VERSION}`,
    };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (this.#token) headers["Authorization"] = `Bearer ${this.#token}`;

    // One signal for the caller's abort and the request timeout.
    const ctl = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ctl.abort();
    }, (opts.timeout ?? this.#timeout) * 1000);
    const onAbort = (): void => ctl.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    let status: number;
    let text: string;
    let retryAfter: string | null;
    try {
      const init: RequestInit = { method, headers, signal: ctl.signal };
      if (body !== undefined) init.body = JSON.stringify(body);
      const res = await this.#fetch(this.baseUrl + path, init);
      status = res.status;
      retryAfter = res.headers.get("Retry-After");
      text = await res.text();
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      throw new Unreachable(`${where}: ${timedOut ? "timed out" : describe(err)}`, { cause: err });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
    if (status < 200 || status > 299) throw errorFromResponse(status, text, retryAfter);
    try {
      return JSON.parse(text) as R;
    } catch {
      throw new HitlError(`${where}: response is not JSON (HTTP ${status})`, { code: "unexpected_response", status });
    }
  }
}

/** The most useful words of a fetch failure ("fetch failed" hides them in its cause). */
function describe(err: unknown): string {
  const cause = (err as { cause?: { message?: unknown } } | null)?.cause;
  if (cause && typeof cause.message === "string" && cause.message) return cause.message;
  return err instanceof Error ? err.message : String(err);
}

/**
 * Returns the pause in milliseconds before retry number `attempt` (from 0):
 * doubling from 100 ms, capped at 5 s, between half and all of it so that
 * many agents do not retry in step.
 */
export function backoff(attempt: number): number {
  const d = Math.min(100 * 2 ** Math.min(attempt, 16), 5000);
  return d / 2 + Math.random() * (d / 2);
}

/** Resolves after ms milliseconds, or rejects with the signal's reason when it is aborted first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
