/**
 * LangGraph's interrupts, answered by a person through hitl.
 *
 * A node that calls `interrupt()` with LangChain Agent Inbox's
 * `HumanInterrupt` (or a list of them), or LangChain's
 * `humanInTheLoopMiddleware`, pauses the run; {@link resumeWithHitl} asks
 * hitl for each interrupt as an action and returns the `Command` that
 * resumes it with the person's answers:
 *
 * ```ts
 * const config = { configurable: { thread_id: "thread-1" } };
 * let state = await graph.invoke(input, config);
 * while (isInterrupted(state)) state = await graph.invoke(await resumeWithHitl(hitl, state[INTERRUPT]), config);
 * ```
 *
 * The shapes and their mapping are in docs/contracts/agent-inbox.md.
 * `Command` is imported from `@langchain/langgraph` (1.x).
 * @module
 */

import { Command } from "@langchain/langgraph";

import type { Client } from "./client.js";
import { HitlError } from "./errors.js";
import type { ActionDecision, AskOptions } from "./questions.js";
import type { Decision, JsonSchema } from "./types.js";

/** Agent Inbox's HumanInterrupt: an action to review and what the person may do. */
export interface HumanInterrupt {
  action_request: { action: string; args: Record<string, unknown> };
  config: { allow_ignore: boolean; allow_respond: boolean; allow_edit: boolean; allow_accept: boolean };
  description?: string;
}

/** Agent Inbox's HumanResponse: accept or edit (with the action to run), response (text), ignore. */
export type HumanResponse =
  | { type: "accept" | "edit"; args: { action: string; args: Record<string, unknown> } }
  | { type: "response"; args: string }
  | { type: "ignore"; args: null };

/** LangChain v1's HITLRequest, as Python writes it (`humanInTheLoopMiddleware` in JS writes it in camelCase). */
export interface HITLRequest {
  action_requests: { name: string; args: Record<string, unknown>; description?: string }[];
  review_configs: { action_name: string; allowed_decisions: ("approve" | "edit" | "reject")[]; args_schema?: JsonSchema }[];
}

/** LangChain v1's decisions, in the request's casing (`edited_action` or `editedAction`). */
export type HITLDecision =
  | { type: "approve" }
  | { type: "edit"; edited_action: { name: string; args: Record<string, unknown> } }
  | { type: "edit"; editedAction: { name: string; args: Record<string, unknown> } }
  | { type: "reject"; message?: string };

/** An interrupt as a run reports it (`state.__interrupt__`). */
export interface GraphInterrupt {
  id?: string;
  value?: unknown;
}

/** How the questions are asked. */
export type InterruptOptions = Pick<AskOptions, "timeout" | "sourceAgent" | "sessionId" | "metadata" | "targets" | "notify" | "signal">;

/**
 * Answers every interrupt of a paused run (the `__interrupt__` list, each
 * value a HumanInterrupt, a list of them, or a HITL middleware request)
 * through hitl, and returns the Command that resumes the run: with the
 * answer when there is one interrupt, with a map by interrupt id when
 * there are several. Each interrupt is asked with an idempotency key from
 * its id, so a process that restarts and asks again waits on the same
 * questions.
 */
// The Command's update and node types are any, so that it is accepted by
// the invoke of a graph of any state and nodes (it carries only resume).
export async function resumeWithHitl(hitl: Client, interrupts: readonly GraphInterrupt[], opts: InterruptOptions = {}): Promise<Command<unknown, any, any>> {
  if (interrupts.length === 0) throw new TypeError("resumeWithHitl: the run has no interrupts");
  const answers = await Promise.all(interrupts.map((it) => answerInterrupt(hitl, it.value, { ...opts, key: it.id ? `langgraph:${it.id}` : undefined })));
  if (interrupts.length === 1) return new Command({ resume: answers[0] });
  const resume: Record<string, unknown> = {};
  interrupts.forEach((it, i) => {
    if (!it.id) throw new TypeError("resumeWithHitl: several interrupts without ids cannot be resumed apart");
    resume[it.id] = answers[i];
  });
  return new Command({ resume });
}

/**
 * Returns the resume value for one interrupt's value: the HumanResponse
 * list for a HumanInterrupt (or a list of them), `{ decisions }` for a
 * HITL middleware request. A review that gets no answer (expired,
 * cancelled, hitl unreachable) resumes with "do not run it" and the
 * reason: a `response` (or `ignore`) for a HumanInterrupt, a `reject` for
 * the middleware; when the interrupt allows neither, the error is thrown.
 */
export async function answerInterrupt(hitl: Client, value: unknown, opts: InterruptOptions & { key?: string | undefined } = {}): Promise<unknown> {
  const { key, ...ask } = opts;
  const request = readRequest(value);
  if (request) return answerRequest(hitl, request, ask, key);
  const list = Array.isArray(value);
  const interrupts = (list ? value : [value]) as unknown[];
  if (interrupts.length === 0 || !interrupts.every(isHumanInterrupt)) {
    throw new TypeError("answerInterrupt: the interrupt is neither a HumanInterrupt (or a list of them) nor a HITL middleware request");
  }
  return Promise.all(interrupts.map((hi, i) => answerHuman(hitl, hi, ask, key && (list ? `${key}#${i}` : key))));
}

/** Asks one HumanInterrupt and returns its HumanResponse. */
async function answerHuman(hitl: Client, hi: HumanInterrupt, ask: InterruptOptions, key: string | undefined): Promise<HumanResponse> {
  const c = hi.config;
  const decisions: Decision[] = [];
  if (c.allow_accept) decisions.push("approve");
  if (c.allow_edit) decisions.push("edit");
  if (c.allow_ignore) decisions.push("reject");
  if (c.allow_respond) decisions.push("respond");
  const action = hi.action_request.action;
  let d: ActionDecision;
  try {
    d = await hitl.reviewAction(action, hi.action_request.args ?? {}, { ...ask, decisions, ...(hi.description ? { context: hi.description } : {}), ...(key ? { idempotencyKey: key } : {}) });
  } catch (err) {
    if (!(err instanceof HitlError)) throw err;
    if (c.allow_respond) return { type: "response", args: `Not done: ${action} was not reviewed (${err.message}).` };
    if (c.allow_ignore) return { type: "ignore", args: null };
    throw err; // nothing the interrupt allows says "do not run it"
  }
  switch (d.decision) {
    case "approve":
      return { type: "accept", args: { action, args: hi.action_request.args ?? {} } };
    case "edit":
      return { type: "edit", args: { action, args: d.args } };
    case "respond":
      return { type: "response", args: d.message };
  }
  return { type: "ignore", args: null };
}

/** A HITL middleware request in either casing, read as Python's. */
interface Request {
  camel: boolean;
  actions: HITLRequest["action_requests"];
  configs: HITLRequest["review_configs"];
}

/** Asks each action of a HITL middleware request and returns `{ decisions }`. */
async function answerRequest(hitl: Client, r: Request, ask: InterruptOptions, key: string | undefined): Promise<{ decisions: HITLDecision[] }> {
  const decisions = await Promise.all(
    r.actions.map(async (a, i): Promise<HITLDecision> => {
      const config = r.configs.find((c) => c.action_name === a.name);
      if (!config) throw new TypeError(`answerInterrupt: no review config for action ${JSON.stringify(a.name)}`);
      let d: ActionDecision;
      try {
        d = await hitl.reviewAction(a.name, a.args ?? {}, {
          ...ask,
          decisions: config.allowed_decisions,
          ...(config.args_schema ? { argsSchema: config.args_schema } : {}),
          ...(a.description ? { context: a.description } : {}),
          ...(key ? { idempotencyKey: `${key}#${i}` } : {}),
        });
      } catch (err) {
        if (!(err instanceof HitlError) || !config.allowed_decisions.includes("reject")) throw err;
        return { type: "reject", message: `Not run: ${a.name} was not reviewed (${err.message}).` };
      }
      switch (d.decision) {
        case "approve":
          return { type: "approve" };
        case "edit": {
          const edited = { name: a.name, args: d.args };
          return r.camel ? { type: "edit", editedAction: edited } : { type: "edit", edited_action: edited };
        }
      }
      return d.message ? { type: "reject", message: d.message } : { type: "reject" };
    }),
  );
  return { decisions };
}

/** Reports whether v is a HumanInterrupt. */
function isHumanInterrupt(v: unknown): v is HumanInterrupt {
  const hi = v as Partial<HumanInterrupt> | null;
  return typeof hi === "object" && hi !== null && typeof hi.action_request?.action === "string" && typeof hi.config === "object" && hi.config !== null;
}

/** Reads v as a HITL middleware request in either casing (as Python's spelling), or returns undefined. */
function readRequest(v: unknown): Request | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  const camel = Array.isArray(o["actionRequests"]);
  const actions = camel ? o["actionRequests"] : o["action_requests"];
  const configs = camel ? o["reviewConfigs"] : o["review_configs"];
  if (!Array.isArray(actions) || !Array.isArray(configs)) return undefined;
  return {
    camel,
    actions: actions as HITLRequest["action_requests"],
    configs: (configs as Record<string, unknown>[]).map((c) => ({
      action_name: (camel ? c["actionName"] : c["action_name"]) as string,
      allowed_decisions: ((camel ? c["allowedDecisions"] : c["allowed_decisions"]) ?? []) as ("approve" | "edit" | "reject")[],
      ...((camel ? c["argsSchema"] : c["args_schema"]) ? { args_schema: (camel ? c["argsSchema"] : c["args_schema"]) as JsonSchema } : {}),
    })),
  };
}
