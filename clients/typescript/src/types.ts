/**
 * What the server sends and takes, as TypeScript types: the JSON of the
 * HTTP API, field for field.
 * @module
 */

/** The kind of answer a question expects. */
export type InteractionType = "approval" | "single_choice" | "multi_choice" | "form" | "free_text" | "action" | "handoff";

/**
 * The answer's type for each interaction type: the value an answered
 * interaction's `result.value` holds. A new interaction type is one more
 * entry here.
 */
export interface AnswerTypes {
  approval: boolean;
  single_choice: string;
  multi_choice: string[];
  form: Record<string, unknown>;
  free_text: string;
  action: ActionValue;
  /** A handoff's answer is the person's reply. */
  handoff: string;
}

/** The answer's type for interaction type T. */
export type Answer<T extends InteractionType> = AnswerTypes[T];

/** Where an interaction is in its life: pending, then exactly one of the others. */
export type Status = "pending" | "answered" | "expired" | "cancelled";

/** A JSON Schema (draft 2020-12) object, for a form. */
export type JsonSchema = { [keyword: string]: unknown };

/** One choice: the `key` an answer refers to and the `label` the person sees. */
export interface Option<K extends string = string> {
  key: K;
  label: string;
  description?: string;
}

/** What a person may decide about an action: run it, run it with other arguments, not run it, or answer instead. */
export type Decision = "approve" | "edit" | "reject" | "respond";

/** The tool call an action asks about. */
export interface ActionCall<A extends object = Record<string, unknown>> {
  /** The tool's name, such as "Bash". */
  name: string;
  /** The tool's arguments as the agent proposed them (a JSON object). */
  args: A;
  /** What the call is for, for the person. */
  description?: string;
  /** What the call does in every agent's terms: shell, file.write, file.edit, file.read, mcp or web.fetch. */
  kind?: "shell" | "file.write" | "file.edit" | "file.read" | "mcp" | "web.fetch";
  /** The call in its kind's terms (shell: {command, cwd}; file.*: {path, …}; mcp: {server, tool, args}; web.fetch: {url}). */
  input?: Record<string, unknown>;
}

/**
 * An action's answer, as `result.value` holds it: approve (run as
 * proposed), edit (run with `args`), reject (do not run; `message` says
 * why, when given), respond (do not run; `message` is the reply).
 */
export type ActionValue<A extends object = Record<string, unknown>> =
  | { decision: "approve" }
  | { decision: "edit"; args: A }
  | { decision: "reject"; message?: string }
  | { decision: "respond"; message: string };

/**
 * A rule an answer makes ("always"): `true` for every call of the action by
 * the agent, or one predicate on one argument, with an optional expiry.
 */
export type Always =
  | true
  | {
      match?: { arg: string; prefix?: string; command?: string; glob?: string; equals?: unknown } | null;
      /** "agent" (the default): this agent's tool; "all_agents": the action's kind, from every agent of the same caller. */
      scope?: "agent" | "all_agents";
      ttl_seconds?: number;
      expires_at?: string;
    };

/**
 * An answer to an action, as `Client.respond` sends it: an
 * {@link ActionValue}, and on approve or reject, `always` to make a rule
 * that decides the agent's later calls of the action the same way.
 */
export type ActionAnswer<A extends object = Record<string, unknown>> =
  | ActionValue<A>
  | { decision: "approve"; always: Always }
  | { decision: "reject"; message?: string; always: Always };

/** Who may answer; empty means anyone. */
export interface Targets {
  users?: string[];
  groups?: string[];
}

/** How an interaction ended. */
export interface Result<V = unknown> {
  /** The answer, in the type of the question (absent when cancelled or expired). */
  value?: V;
  responded_by?: string;
  /** Where the answer came from: api, web, cli, mcp, slack, or timeout. */
  channel?: string;
  responded_at: string;
  /** Whether the default answer was used at the deadline. */
  timed_out: boolean;
  /** Why it was cancelled or expired. */
  reason?: string;
  /** For an action whose arguments were edited: the RFC 6902 patch from the proposed ones. */
  args_diff?: unknown[];
  /** For an action a rule decided without a person: the rule. */
  rule_id?: string;
  /** For an approved action: its signed receipt, which the tool checks with verifyReceipt. */
  receipt?: string;
}

/** One question from an agent to people, as the server returns it. */
export interface Interaction<T extends InteractionType = InteractionType> {
  interaction_id: string;
  interaction_type: T;
  question: string;
  context?: string;
  options: Option[];
  form_schema?: JsonSchema;
  /** An action's tool call. */
  action?: ActionCall;
  /** The JSON Schema an action's edited arguments must meet. */
  args_schema?: JsonSchema;
  /** The decisions the person may make about an action. */
  decisions?: Decision[];
  /** Whether rejecting the action needs a reason. */
  reject_requires_message?: boolean;
  default_response?: Answer<T>;
  /** Seconds from creation to the deadline. */
  timeout: number;
  /** RFC 3339. */
  deadline: string;
  on_timeout: "cancel" | "default";
  idempotency_key?: string;
  source_agent?: string;
  session_id?: string;
  metadata?: Record<string, unknown>;
  targets?: Targets;
  notify?: Record<string, unknown>;
  /** Where the server POSTs the interaction once it ends. */
  callback_url?: string;
  created_by: string;
  created_via: string;
  created_at: string;
  status: Status;
  result?: Result<Answer<T>>;
}

/** The body of `POST /api/v1/interactions`. */
export interface CreateRequest<T extends InteractionType = InteractionType> {
  /** Default `free_text`. */
  interaction_type?: T;
  /** Required, but for an action, whose default is "Run <name>?". */
  question?: string;
  context?: string;
  /** Labels (the key is derived) or options. */
  options?: Array<string | Option>;
  form_schema?: JsonSchema;
  /** For an action: the tool call to review. */
  action?: ActionCall<object>;
  /** For an action: the JSON Schema an edit must meet. */
  args_schema?: JsonSchema;
  /** For an action: the decisions allowed; default all four. */
  decisions?: Decision[];
  /** For an action: whether a reject needs a reason. */
  reject_requires_message?: boolean;
  default_response?: unknown;
  /** Seconds the person has; default one hour. */
  timeout?: number;
  /** An absolute deadline (RFC 3339); wins over timeout. */
  deadline?: string;
  on_timeout?: "cancel" | "default";
  idempotency_key?: string;
  source_agent?: string;
  session_id?: string;
  metadata?: Record<string, unknown>;
  targets?: Targets;
  /** Per-question notification settings, such as `{ slack: false }`. */
  notify?: Record<string, unknown>;
  /**
   * An http(s) URL the server POSTs the final interaction to once it ends,
   * signed (see {@link verifyWebhook}), so the agent need not wait.
   */
  callback_url?: string;
}

/** A page of interactions, newest first. */
export interface Page {
  interactions: Interaction[];
  /** The cursor of the next page, or null on the last. */
  next_cursor: string | null;
}

/** Whether a status is final. */
export function isTerminal(status: Status): boolean {
  return status === "answered" || status === "expired" || status === "cancelled";
}
