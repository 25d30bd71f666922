/**
 * The typed questions: each is the request to send and the function that
 * turns the answered interaction into the value the caller gets. A new
 * interaction type is one more builder here and one method on the client.
 * @module
 */

import { Cancelled, Expired, HitlError, InvalidAnswer } from "./errors.js";
import type { ActionValue, CreateRequest, Decision, Interaction, InteractionType, JsonSchema, Option, Targets } from "./types.js";

/** The reason given to the server when the caller stops waiting (an aborted signal). */
export const CANCEL_REASON = "agent_cancelled";

/** What every helper accepts besides the question. D is the answer's type. */
export interface AskOptions<D = unknown> {
  /** Supporting text shown with the question (Markdown). */
  context?: string;
  /** Seconds the person has to answer; the server's default is one hour. `deadline` wins. */
  timeout?: number;
  /** An absolute deadline. */
  deadline?: Date | string;
  /** Pre-fills the person's answer; with `defaultOnTimeout` it is the answer at the deadline. */
  default?: D;
  /** Answer with `default` when the deadline passes instead of throwing {@link Expired}. */
  defaultOnTimeout?: boolean;
  /**
   * Makes retries safe: asking again with the same key and question waits
   * on the same interaction (and gets its answer if it has one); the same
   * key with another question throws {@link Conflict}. Default: a new
   * random key per call.
   */
  idempotencyKey?: string;
  /** The agent asking, shown to the person (default: the client's `agent`). */
  sourceAgent?: string;
  /** Groups questions from one agent session. */
  sessionId?: string;
  /** Free-form provenance stored with the interaction. */
  metadata?: Record<string, unknown>;
  /** Who may answer; default anyone. */
  targets?: Targets;
  /** Per-question notification settings, such as `{ slack: false }`. */
  notify?: Record<string, unknown>;
  /** Aborting it cancels the question on the server, then the call rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * A choice: a label (its key is derived by the server: lower case, runs of
 * anything but letters and digits become "_", so "EU West" is "eu_west"),
 * or an option with its own key.
 */
export type ChoiceSpec<K extends string = string> = string | Option<K>;

/** A question ready to ask: the request body and how to read the answer. */
export interface Question<V> {
  request: CreateRequest;
  read(interaction: Interaction): V;
}

/** Returns a fresh idempotency key for one call. */
export function newKey(): string {
  return `ask-${globalThis.crypto.randomUUID()}`;
}

/**
 * Returns an answered interaction, and throws {@link Expired} or
 * {@link Cancelled} for one that ended otherwise.
 */
export function outcome<T extends Interaction>(i: T): T {
  switch (i.status) {
    case "answered":
      return i;
    case "expired":
      throw new Expired(
        `timeout waiting for feedback: nobody answered interaction ${i.interaction_id} before its deadline (${i.deadline})`,
        { interaction: i },
      );
    case "cancelled":
      throw new Cancelled(`interaction ${i.interaction_id} was cancelled: ${i.result?.reason || "no reason given"}`, {
        interaction: i,
      });
  }
  throw new HitlError(`interaction ${i.interaction_id} is still ${i.status}`, { code: "conflict", interaction: i });
}

/** Returns the create request for a question of type kind with the helper's options. */
export function build(kind: InteractionType, question: string, opts: AskOptions = {}): CreateRequest {
  const req: CreateRequest = { interaction_type: kind, question };
  if (opts.context) req.context = opts.context;
  if (opts.timeout !== undefined) req.timeout = opts.timeout;
  if (opts.deadline !== undefined) {
    req.deadline = opts.deadline instanceof Date ? opts.deadline.toISOString() : opts.deadline;
  }
  if (opts.default !== undefined) req.default_response = opts.default;
  if (opts.defaultOnTimeout) req.on_timeout = "default";
  if (opts.idempotencyKey) req.idempotency_key = opts.idempotencyKey;
  if (opts.sourceAgent) req.source_agent = opts.sourceAgent;
  if (opts.sessionId) req.session_id = opts.sessionId;
  if (opts.metadata) req.metadata = opts.metadata;
  if (opts.targets) req.targets = opts.targets;
  if (opts.notify) req.notify = opts.notify;
  return req;
}

/**
 * What {@link Client.handoff} accepts besides the message: {@link AskOptions}
 * without those that shape an answer (a reply is the person's own).
 */
export type HandoffOptions = Omit<AskOptions, "default" | "defaultOnTimeout">;

/** The request that hands a conversation to a person with the agent's message. */
export function handoff(message: string, opts: HandoffOptions = {}): CreateRequest<"handoff"> {
  for (const name of ["default", "defaultOnTimeout"]) {
    if (name in opts) throw new TypeError(`handoff takes no ${name}: the reply is the person's own`);
  }
  return build("handoff", message, opts) as CreateRequest<"handoff">;
}

/** The person's reply to an ended handoff; throws {@link Expired} or {@link Cancelled} when it ended without one. */
export function reply(i: Interaction): string {
  return typed(outcome(i), "string", "the reply (a string)");
}

/** A free-text question; the answer is the person's text. */
export function text(question: string, opts?: AskOptions<string>): Question<string> {
  return { request: build("free_text", question, opts), read: (i) => typed(i, "string", "a string") };
}

/** An approval; the answer is true for approve. The buttons read yes and no. */
export function yesNo(question: string, yes: string | undefined, no: string | undefined, opts?: AskOptions<boolean>): Question<boolean> {
  const request = build("approval", question, opts);
  if (yes || no) {
    request.options = [
      { key: "approve", label: yes || "Approve" },
      { key: "reject", label: no || "Reject" },
    ];
  }
  return { request, read: (i) => typed(i, "boolean", "true or false") };
}

/** One of several; the answer is the chosen option's key. */
export function choice(question: string, choices: readonly ChoiceSpec[], opts?: AskOptions<string>): Question<string> {
  const request = build("single_choice", question, opts);
  request.options = [...choices];
  return { request, read: (i) => typed(i, "string", "an option key") };
}

/** Any number of several; the answer is the chosen keys, in the order given. */
export function choices(question: string, choices: readonly ChoiceSpec[], opts?: AskOptions<string[]>): Question<string[]> {
  const request = build("multi_choice", question, opts);
  request.options = [...choices];
  return {
    request,
    read: (i) => {
      const v = i.result?.value;
      if (!Array.isArray(v) || !v.every((k) => typeof k === "string")) {
        throw new InvalidAnswer(`interaction ${i.interaction_id}: expected a list of option keys as the answer`, { interaction: i });
      }
      return v as string[];
    },
  };
}

/** A form; the answer is an object valid against the schema. */
export function form<T>(question: string, schema: JsonSchema, opts?: AskOptions<T>): Question<T> {
  const request = build("form", question, opts);
  request.form_schema = schema;
  return {
    request,
    read: (i) => {
      const v = i.result?.value;
      if (typeof v !== "object" || v === null || Array.isArray(v)) {
        throw new InvalidAnswer(`interaction ${i.interaction_id}: expected an object as the answer`, { interaction: i });
      }
      return v as T;
    },
  };
}

function typed<K extends "string" | "boolean">(i: Interaction, kind: K, what: string): K extends "string" ? string : boolean {
  const v = i.result?.value;
  if (typeof v !== kind) {
    throw new InvalidAnswer(`interaction ${i.interaction_id}: expected ${what} as the answer, got ${typeof v}`, { interaction: i });
  }
  return v as K extends "string" ? string : boolean;
}

/** The options of an action review: {@link AskOptions} and what the person may do. */
export interface ReviewActionOptions<A extends object = Record<string, unknown>> extends AskOptions<ActionValue<A>> {
  /** What the person reads first; default "Run <name>?". */
  question?: string;
  /** What the call is for, shown with it. */
  description?: string;
  /** The JSON Schema (2020-12, an object) an edit must meet; the server validates edits against it. */
  argsSchema?: JsonSchema;
  /** The decisions the person may make; default all four. */
  decisions?: readonly Decision[];
  /** Whether a rejection needs a reason. */
  rejectRequiresMessage?: boolean;
}

/** What every decision carries: the rule that made it, if any, and the interaction. */
interface DecisionBase {
  /** The rule that decided without a person, or undefined when a person did. */
  ruleId: string | undefined;
  /** The answered interaction. */
  interaction: Interaction<"action">;
}

/**
 * What a person (or a rule) decided about a tool call. `run` says whether
 * to run it: with `args`, the proposed arguments on approve and the
 * person's on edit. When it is false, `message` is the reason of a reject
 * ("" when none was given) or the reply of a respond.
 */
export type ActionDecision<A extends object = Record<string, unknown>> =
  | (DecisionBase & { decision: "approve" | "edit"; run: true; args: A; message: "" })
  | (DecisionBase & { decision: "reject" | "respond"; run: false; args: undefined; message: string });

/** An action review; the answer is the decision, with the arguments to run. */
export function action<A extends object>(name: string, args: A, opts: ReviewActionOptions<A> = {}): Question<ActionDecision<A>> {
  const request = build("action", opts.question ?? "", opts);
  if (!opts.question) delete request.question;
  request.action = opts.description ? { name, args, description: opts.description } : { name, args };
  if (opts.argsSchema) request.args_schema = opts.argsSchema;
  if (opts.decisions) request.decisions = [...opts.decisions];
  if (opts.rejectRequiresMessage) request.reject_requires_message = true;
  return { request, read: (i) => readDecision(i as Interaction<"action">, args) };
}

/** Reads the decision an answered action holds. */
function readDecision<A extends object>(i: Interaction<"action">, proposed: A): ActionDecision<A> {
  const v = i.result?.value as { decision?: unknown; args?: unknown; message?: unknown } | undefined;
  const base = { ruleId: i.result?.rule_id, interaction: i };
  const message = typeof v?.message === "string" ? v.message : "";
  switch (v?.decision) {
    case "approve":
      return { ...base, decision: "approve", run: true, args: proposed, message: "" };
    case "edit":
      if (typeof v.args === "object" && v.args !== null && !Array.isArray(v.args)) {
        return { ...base, decision: "edit", run: true, args: v.args as A, message: "" };
      }
      break;
    case "reject":
    case "respond":
      return { ...base, decision: v.decision, run: false, args: undefined, message };
  }
  throw new InvalidAnswer(`interaction ${i.interaction_id}: expected an action's decision as the answer`, { interaction: i });
}
