/**
 * The Vercel AI SDK's tool approvals, decided by a person through hitl.
 *
 * A tool with `needsApproval` makes `generateText` and `streamText` stop
 * with a `tool-approval-request` instead of running it. Pass the
 * conversation, with the response's messages, to {@link reviewToolApprovals}:
 * each pending request is asked as an hitl action, and the messages come
 * back with the person's `tool-approval-response`s (and, for an edit, the
 * tool call's input replaced), ready for the next call, which runs what
 * was approved:
 *
 * ```ts
 * const messages: ModelMessage[] = [{ role: "user", content: "Clean up the build" }];
 * let result = await generateText({ model, tools, messages });
 * messages.push(...result.response.messages);
 * const reviewed = await reviewToolApprovals(new Client(), messages);
 * result = await generateText({ model, tools, messages: reviewed });
 * ```
 *
 * Types only are imported from `ai` (version 6, the first with tool
 * approval); the module runs without it.
 * @module
 */

import type { ModelMessage, ToolApprovalResponse } from "ai";

import type { Client } from "./client.js";
import { HitlError } from "./errors.js";
import type { AskOptions } from "./questions.js";
import type { Decision, JsonSchema } from "./types.js";

/** How {@link reviewToolApprovals} asks. */
export interface ToolReviewOptions extends Pick<AskOptions, "timeout" | "sourceAgent" | "sessionId" | "metadata" | "targets" | "notify" | "signal"> {
  /**
   * The decisions offered; default approve, edit, reject and respond. Edit
   * is never offered for a signed request (`experimental_toolApprovalSecret`):
   * the signature binds the input, so an edited call could not run.
   */
  decisions?: readonly Decision[];
  /** The JSON Schema an edit of each tool's input must meet, by tool name. */
  argsSchemas?: Readonly<Record<string, JsonSchema>>;
}

/** A tool call awaiting approval, found in the messages. */
interface PendingApproval {
  approvalId: string;
  toolCallId: string;
  toolName: string;
  input: unknown;
  signed: boolean;
  /** Whether the provider runs the tool (its approval response goes to the model). */
  providerExecuted: boolean;
}

/** What a review decided about one approval request. */
interface Verdict {
  response: ToolApprovalResponse;
  /** The edited input to run the call with, for an edit. */
  input?: Record<string, unknown>;
}

/**
 * Asks hitl about every tool approval request in `messages` that has no
 * response yet, and returns the messages to continue with: a copy, with
 * an edited call's input replaced and a `tool` message of the approval
 * responses added. Approve and edit approve; reject denies with the
 * person's reason, respond with their reply, both of which the model reads.
 * A review that gets no answer (expired, cancelled, the server
 * unreachable) denies, with the reason: a tool never runs unreviewed.
 * Aborting `signal` withdraws the questions and rejects.
 */
export async function reviewToolApprovals(hitl: Client, messages: readonly ModelMessage[], opts: ToolReviewOptions = {}): Promise<ModelMessage[]> {
  const pending = pendingApprovals(messages);
  if (pending.length === 0) return [...messages];
  const verdicts = await Promise.all(pending.map((p) => review(hitl, p, opts)));
  const edits = new Map<string, Record<string, unknown>>();
  pending.forEach((p, i) => {
    const input = verdicts[i]!.input;
    if (input) edits.set(p.toolCallId, input);
  });
  return [...withInputs(messages, edits), { role: "tool", content: verdicts.map((v) => v.response) }];
}

/** Asks about one call and returns the approval response. */
async function review(hitl: Client, p: PendingApproval, opts: ToolReviewOptions): Promise<Verdict> {
  const respond = (approved: boolean, reason?: string): ToolApprovalResponse => ({
    type: "tool-approval-response",
    approvalId: p.approvalId,
    approved,
    ...(reason === undefined ? {} : { reason }),
    ...(p.providerExecuted ? { providerExecuted: true } : {}),
  });
  const deny = (reason: string): Verdict => ({ response: respond(false, reason) });
  if (typeof p.input !== "object" || p.input === null || Array.isArray(p.input)) {
    return deny(`Not run: hitl reviews calls whose input is an object; ${p.toolName} got ${JSON.stringify(p.input)}.`);
  }
  let decisions = opts.decisions ?? (["approve", "edit", "reject", "respond"] as const);
  if (p.signed) decisions = decisions.filter((d) => d !== "edit");
  const schema = opts.argsSchemas?.[p.toolName];
  try {
    const d = await hitl.reviewAction(p.toolName, p.input as Record<string, unknown>, {
      ...pick(opts),
      decisions,
      idempotencyKey: `ai-sdk:${p.approvalId}`,
      ...(schema ? { argsSchema: schema } : {}),
    });
    if (d.run) {
      const response = respond(true);
      return d.decision === "edit" ? { response, input: d.args } : { response };
    }
    if (d.decision === "respond") return deny(`A person answered instead of running ${p.toolName}: ${d.message}`);
    return deny(d.message ? `A person rejected ${p.toolName}: ${d.message}` : `A person rejected ${p.toolName}.`);
  } catch (err) {
    if (!(err instanceof HitlError)) throw err; // an aborted signal, or a bug
    return deny(`Not run: ${p.toolName} was not reviewed (${err.message}).`);
  }
}

/** The AskOptions of opts that reviewAction takes as they are. */
function pick(opts: ToolReviewOptions): AskOptions<never> {
  const out: AskOptions<never> = {};
  for (const k of ["timeout", "sourceAgent", "sessionId", "metadata", "targets", "notify", "signal"] as const) {
    if (opts[k] !== undefined) (out as Record<string, unknown>)[k] = opts[k];
  }
  return out;
}

/** Returns the approval requests of messages that no tool message has answered, in order. */
function pendingApprovals(messages: readonly ModelMessage[]): PendingApproval[] {
  const calls = new Map<string, { toolName: string; input: unknown; providerExecuted: boolean }>();
  const requests: { approvalId: string; toolCallId: string; signed: boolean }[] = [];
  const answered = new Set<string>();
  for (const m of messages) {
    if (typeof m.content === "string") continue;
    for (const part of m.content) {
      if (part.type === "tool-call") {
        calls.set(part.toolCallId, { toolName: part.toolName, input: part.input, providerExecuted: part.providerExecuted === true });
      }
      else if (part.type === "tool-approval-request") {
        requests.push({ approvalId: part.approvalId, toolCallId: part.toolCallId, signed: part.signature !== undefined });
      } else if (part.type === "tool-approval-response") answered.add(part.approvalId);
    }
  }
  const out: PendingApproval[] = [];
  for (const r of requests) {
    const call = calls.get(r.toolCallId);
    if (!answered.has(r.approvalId) && call) out.push({ ...r, ...call });
  }
  return out;
}

/**
 * Returns messages with the input of each edited call replaced (and the
 * pre-validation input its approval request may keep), copying only what
 * changes: the SDK runs an approved call with its tool-call part's input.
 */
function withInputs(messages: readonly ModelMessage[], edits: ReadonlyMap<string, Record<string, unknown>>): ModelMessage[] {
  if (edits.size === 0) return [...messages];
  return messages.map((m): ModelMessage => {
    if (m.role !== "assistant" || typeof m.content === "string") return m;
    let changed = false;
    const content = m.content.map((part) => {
      if ((part.type === "tool-call" || part.type === "tool-approval-request") && edits.has(part.toolCallId)) {
        changed = true;
        const input = edits.get(part.toolCallId)!;
        if (part.type === "tool-call") return { ...part, input };
        return "inputSchemaInput" in part ? { ...part, inputSchemaInput: input } : part;
      }
      return part;
    });
    return changed ? { ...m, content } : m;
  });
}
