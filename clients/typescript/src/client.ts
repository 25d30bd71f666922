/**
 * The client: the HTTP API one method a route, and the helpers that ask and wait.
 * @module
 */

import { HitlError, Unavailable, Unreachable } from "./errors.js";
import { Transport, backoff, env, sleep } from "./http.js";
import * as q from "./questions.js";
import type { ActionDecision, AskOptions, ChoiceSpec, HandoffOptions, Question, ReviewActionOptions } from "./questions.js";
import { isTerminal } from "./types.js";
import type { CreateRequest, Interaction, InteractionType, JsonSchema, Option, Page, Status } from "./types.js";

/** How long each long-poll asks the server to hold the request, in seconds (the server holds at most 300). */
export const DEFAULT_POLL_TIMEOUT = 60;
/** The timeout of every request that is not a long-poll, in seconds. */
export const DEFAULT_REQUEST_TIMEOUT = 30;
// Added to a long-poll's timeout, for the server's reply to arrive.
const READ_SLACK = 15;
// How often a create is sent before an unreachable server is reported; the
// idempotency key makes a repeat return the same interaction.
const CREATE_ATTEMPTS = 3;
// How long after an interaction's deadline an unreachable server is still
// waited for, in ms: the answer may have come in before the deadline.
const DEADLINE_GRACE = 60_000;
// The timeout of the request that cancels a question the caller stopped waiting for.
const CANCEL_TIMEOUT = 5;

/** How to reach the server. Every field is optional. */
export interface ClientOptions {
  /** The server; default HITL_URL, then `http://127.0.0.1:7878`. */
  url?: string;
  /** An API token sent as `Authorization: Bearer …`; default HITL_TOKEN. */
  token?: string;
  /** The agent's name, shown to the person with each question; default HITL_AGENT. */
  agent?: string;
  /** Seconds each long-poll of {@link Client.wait} lasts on the server; default 60. */
  pollTimeout?: number;
  /** Seconds before any other request is given up as unreachable; default 30. */
  requestTimeout?: number;
  /** The fetch to use; default the global one. */
  fetch?: typeof fetch;
}

/** Options of the methods that only talk to the server. */
export interface CallOptions {
  /** Aborting it aborts the request, which rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Filters of {@link Client.list}. */
export interface ListOptions extends CallOptions {
  status?: Status;
  limit?: number;
  cursor?: string;
  idempotencyKey?: string;
}

/** Options of {@link Client.wait}. */
export interface WaitOptions extends CallOptions {
  /** Seconds after which the interaction is returned as it stands, perhaps still pending. */
  timeout?: number;
}

/** Options of {@link Client.yesNo}. */
export interface YesNoOptions extends AskOptions<boolean> {
  /** The approve button's label; default "Approve". */
  yesLabel?: string;
  /** The reject button's label; default "Reject". */
  noLabel?: string;
}

/**
 * A client for one hitl server, for agents that wait while a person answers.
 *
 * The helpers ({@link Client.askText}, {@link Client.yesNo},
 * {@link Client.choice}, {@link Client.choices}, {@link Client.form},
 * {@link Client.reviewAction}) ask and resolve once the person answers,
 * with the answer typed by the question. A question nobody answers in time rejects with
 * {@link Expired}, a withdrawn one with {@link Cancelled}; aborting the
 * `signal` cancels the question on the server and rejects with the
 * signal's reason.
 */
export class Client {
  readonly #http: Transport;
  readonly #agent: string | undefined;
  readonly #poll: number;

  constructor(opts: ClientOptions = {}) {
    this.#http = new Transport(opts.url, opts.token, opts.fetch, opts.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT);
    this.#agent = opts.agent ?? env("HITL_AGENT");
    this.#poll = Math.min(Math.max(opts.pollTimeout ?? DEFAULT_POLL_TIMEOUT, 0), 300);
  }

  /** The server address the client talks to. */
  get baseUrl(): string {
    return this.#http.baseUrl;
  }

  /**
   * Asks a question without waiting (`POST /api/v1/interactions`);
   * repeating it with the same `idempotency_key` returns the same interaction.
   */
  create<T extends InteractionType = "free_text">(request: CreateRequest<T>, opts: CallOptions = {}): Promise<Interaction<T>> {
    return this.#http.request("POST", "/api/v1/interactions", request, opts);
  }

  /** Returns one interaction as it stands. */
  get(id: string, opts: CallOptions = {}): Promise<Interaction> {
    return this.#http.request("GET", interactionPath(id), undefined, opts);
  }

  /** Returns a page of interactions, newest first. */
  list(opts: ListOptions = {}): Promise<Page> {
    const query = new URLSearchParams();
    if (opts.status) query.set("status", opts.status);
    if (opts.limit !== undefined) query.set("limit", String(opts.limit));
    if (opts.cursor) query.set("cursor", opts.cursor);
    if (opts.idempotencyKey) query.set("idempotency_key", opts.idempotencyKey);
    const qs = query.toString();
    return this.#http.request("GET", `/api/v1/interactions${qs ? `?${qs}` : ""}`, undefined, opts);
  }

  /**
   * Resolves once the interaction ends, long-polling the server and polling
   * again while it is pending. With `timeout` it resolves with the
   * interaction as it stands, perhaps still pending, once that time has passed.
   *
   * A server restart is ridden out: when the server cannot be reached (or
   * answers 502/503/504) after it was reached once, the poll is retried
   * with backoff until a minute past the interaction's deadline; then it
   * rejects with {@link Unreachable}.
   */
  wait(id: string, opts: WaitOptions = {}): Promise<Interaction> {
    return this.#wait(id, opts.timeout, undefined, opts.signal);
  }

  async #wait<T extends Interaction>(id: string, timeout: number | undefined, last: T | undefined, signal?: AbortSignal): Promise<T> {
    const path = interactionPath(id, "wait");
    const stop = timeout === undefined ? undefined : Date.now() + timeout * 1000;
    for (let attempt = 0; ; attempt++) {
      const poll = stop === undefined ? this.#poll : Math.max(0, Math.min(this.#poll, (stop - Date.now()) / 1000));
      const started = Date.now();
      try {
        last = await this.#http.request<T>("GET", `${path}?timeout=${poll.toFixed(3)}`, undefined, {
          signal,
          timeout: poll + READ_SLACK,
        });
        if (isTerminal(last.status) || (stop !== undefined && Date.now() >= stop)) return last;
        if (Date.now() - started >= (poll * 1000) / 2) {
          attempt = -1; // a whole long-poll with no news: ask again at once
          continue;
        }
        // Handed back early, as a server does when it shuts down.
      } catch (err) {
        if (!(err instanceof Unreachable || err instanceof Unavailable) || !keepTrying(last, stop)) throw err;
      }
      let pause = backoff(attempt);
      if (stop !== undefined) pause = Math.max(0, Math.min(pause, stop - Date.now()));
      await sleep(pause, signal);
    }
  }

  /**
   * Answers a pending interaction (as a person or a responder bot would).
   * The server validates the value: an invalid one rejects with
   * {@link InvalidAnswer}, a second answer {@link Conflict}, a late one
   * {@link Expired}.
   */
  respond(id: string, value: unknown, opts: CallOptions = {}): Promise<Interaction> {
    return this.#http.request("POST", interactionPath(id, "respond"), { value }, opts);
  }

  /** Withdraws a pending interaction; it leaves the person's inbox. */
  cancel(id: string, reason?: string, opts: CallOptions = {}): Promise<Interaction> {
    return this.#http.request("POST", interactionPath(id, "cancel"), reason ? { reason } : {}, opts);
  }

  /**
   * Asks and resolves once the question ends, with the answered interaction
   * (its `result.value` typed by `interaction_type`). Rejects with
   * {@link Expired} or {@link Cancelled} when it ends unanswered.
   *
   * Without an `idempotency_key` a random one is made, so a create whose
   * reply was lost is sent again safely, and a question whose create was
   * interrupted can be found and cancelled. Aborting `signal` cancels the
   * question on the server (reason "agent_cancelled"), then rejects with
   * the signal's reason.
   */
  async ask<T extends InteractionType = "free_text">(request: CreateRequest<T>, opts: CallOptions = {}): Promise<Interaction<T>> {
    const { signal } = opts;
    signal?.throwIfAborted(); // an aborted signal asks nothing
    const req: CreateRequest<T> = { ...request };
    if (!req.idempotency_key) req.idempotency_key = q.newKey();
    if (this.#agent && !req.source_agent) req.source_agent = this.#agent;
    let created: Interaction<T> | undefined;
    try {
      created = await this.#createRetrying(req, signal);
      return q.outcome(await this.#wait(created.interaction_id, undefined, created, signal));
    } catch (err) {
      if (signal?.aborted) await this.#withdraw(req, created);
      throw err;
    }
  }

  async #createRetrying<T extends InteractionType>(req: CreateRequest<T>, signal?: AbortSignal): Promise<Interaction<T>> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.create(req, signal ? { signal } : {});
      } catch (err) {
        if (!(err instanceof Unreachable || err instanceof Unavailable) || attempt === CREATE_ATTEMPTS - 1) throw err;
      }
      await sleep(backoff(attempt), signal);
    }
  }

  /**
   * Cancels the question of an aborted ask, best effort: when the create
   * was cut off, sending it again with its key finds (or makes) the
   * interaction to cancel, so nothing is left pending with nobody waiting.
   */
  async #withdraw(req: CreateRequest, created: Interaction | undefined): Promise<void> {
    try {
      const i = created ?? (await this.#http.request<Interaction>("POST", "/api/v1/interactions", req, { timeout: CANCEL_TIMEOUT }));
      if (!isTerminal(i.status)) {
        await this.#http.request("POST", interactionPath(i.interaction_id, "cancel"), { reason: q.CANCEL_REASON }, { timeout: CANCEL_TIMEOUT });
      }
    } catch (err) {
      if (!(err instanceof HitlError)) throw err; // answered or expired first, or the server is gone
    }
  }

  async #ask<V>(question: Question<V>, signal: AbortSignal | undefined): Promise<V> {
    return question.read(await this.ask(question.request, signal ? { signal } : {}));
  }

  /**
   * Hands the conversation to a person and resolves with the handoff's id
   * at once: the agent stops. `message` is the agent's message to the
   * person; `context` what they need to know, `sessionId` the conversation
   * (a chat frontend on hitl's stream shows the handoff in it), `targets`
   * who may take it, `timeout` how long a reply is awaited. The person's
   * reply is the handoff's answer: whoever resumes the agent gets it with
   * {@link Client.waitReply} (or {@link Client.wait}, as `result.value`).
   */
  async handoff(message: string, opts: HandoffOptions = {}): Promise<string> {
    const { signal } = opts;
    signal?.throwIfAborted();
    const req = q.handoff(message, opts);
    if (!req.idempotency_key) req.idempotency_key = q.newKey();
    if (this.#agent && !req.source_agent) req.source_agent = this.#agent;
    return (await this.#createRetrying(req, signal)).interaction_id;
  }

  /**
   * Waits for the person's reply to the handoff `id` and resolves with it
   * (see {@link Client.wait}). Rejects with {@link Expired} when nobody
   * replied before its deadline, {@link Cancelled} when it was withdrawn.
   * Aborting `signal` stops waiting and leaves the handoff pending.
   */
  async waitReply(id: string, opts: CallOptions = {}): Promise<string> {
    return q.reply(await this.#wait(id, undefined, undefined, opts.signal));
  }

  /** Asks a free-text question, such as a one-time code, and resolves with the text. */
  askText(question: string, opts: AskOptions<string> = {}): Promise<string> {
    return this.#ask(q.text(question, opts), opts.signal);
  }

  /** Asks for an approval: true when the person approves, false when they reject. */
  yesNo(question: string, opts: YesNoOptions = {}): Promise<boolean> {
    return this.#ask(q.yesNo(question, opts.yesLabel, opts.noLabel, opts), opts.signal);
  }

  /**
   * Asks the person to pick one of `choices` and resolves with its key. With
   * options whose keys are literals, the result is typed as one of them.
   */
  choice<const K extends string>(question: string, choices: readonly Option<K>[], opts?: AskOptions<K>): Promise<K>;
  /** Asks the person to pick one of `choices` (labels' keys are derived: "EU West" is "eu_west"). */
  choice(question: string, choices: readonly ChoiceSpec[], opts?: AskOptions<string>): Promise<string>;
  choice(question: string, choices: readonly ChoiceSpec[], opts: AskOptions<string> = {}): Promise<string> {
    return this.#ask(q.choice(question, choices, opts), opts.signal);
  }

  /** Asks the person to pick any number of `choices` and resolves with their keys. */
  choices<const K extends string>(question: string, choices: readonly Option<K>[], opts?: AskOptions<K[]>): Promise<K[]>;
  /** Asks the person to pick any number of `choices` and resolves with their keys. */
  choices(question: string, choices: readonly ChoiceSpec[], opts?: AskOptions<string[]>): Promise<string[]>;
  choices(question: string, choices: readonly ChoiceSpec[], opts: AskOptions<string[]> = {}): Promise<string[]> {
    return this.#ask(q.choices(question, choices, opts), opts.signal);
  }

  /**
   * Asks the person to fill in a form built from `schema` (JSON Schema
   * 2020-12, an object) and resolves with what they entered, which the
   * server has validated against it. T is the shape the schema describes.
   */
  form<T = Record<string, unknown>>(question: string, schema: JsonSchema, opts: AskOptions<T> = {}): Promise<T> {
    return this.#ask(q.form<T>(question, schema, opts), opts.signal);
  }

  /**
   * Asks a person to review a call of the tool `name` with `args` (an
   * object) and resolves with their decision: `run` says whether to run
   * it, and with which `args` (the proposed ones on approve, the person's on
   * edit, valid against `argsSchema` when one is given). A reject or a
   * respond is a decision, not an error: `message` says why, or what to do
   * instead. A rule may decide at once, without a person (`ruleId`).
   */
  reviewAction<A extends object = Record<string, unknown>>(
    name: string,
    args: A,
    opts: ReviewActionOptions<A> = {},
  ): Promise<ActionDecision<A>> {
    return this.#ask(q.action(name, args, opts), opts.signal);
  }
}

/** Returns the API path of one interaction, plus an action such as "wait". */
function interactionPath(id: string, action = ""): string {
  if (!id) throw new TypeError("interaction id is required");
  const path = `/api/v1/interactions/${encodeURIComponent(id)}`;
  return action ? `${path}/${action}` : path;
}

/**
 * Reports whether a wait should retry after the server could not be
 * reached: only once it has been reached (so a wrong URL fails at once),
 * before the caller's own timeout, and until a while after the
 * interaction's deadline.
 */
function keepTrying(last: Interaction | undefined, stop: number | undefined): boolean {
  if (last === undefined || (stop !== undefined && Date.now() >= stop)) return false;
  const deadline = Date.parse(last.deadline);
  return Number.isNaN(deadline) || Date.now() - deadline < DEADLINE_GRACE;
}
