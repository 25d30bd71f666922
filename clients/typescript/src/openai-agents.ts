/**
 * The OpenAI Agents SDK's tool approvals, decided by a person through hitl.
 *
 * A tool with `needsApproval` makes a run stop with `interruptions`
 * instead of calling it. {@link reviewInterruptions} asks hitl for each,
 * approves or rejects it on the run's state, and the run goes on from that
 * state:
 *
 * ```ts
 * let result = await run(agent, "Clean up the build");
 * while (result.interruptions.length > 0) {
 *   await reviewInterruptions(hitl, result);
 *   result = await run(agent, result.state);
 * }
 * ```
 *
 * The SDK runs an approved call with the arguments the model gave, so the
 * person approves, rejects or responds; edit is not offered. Types are
 * declared here, structurally, so the module imports nothing from
 * `@openai/agents` (tested with 0.20).
 * @module
 */

import type { Client } from "./client.js";
import { HitlError } from "./errors.js";
import type { AskOptions } from "./questions.js";
import type { JsonSchema } from "./types.js";

/**
 * A tool call awaiting approval (the SDK's RunToolApprovalItem). Its call
 * id is not used as an idempotency key: a model may repeat one across
 * runs, and an old approval must never answer a new call.
 */
export interface ToolApprovalItem {
  /** The tool's name. */
  readonly name?: string | undefined;
  /** The call's arguments, as the model wrote them (JSON). */
  readonly arguments?: string | undefined;
}

/** A paused run's state: where approvals and rejections are recorded (the SDK's RunState). */
export interface ApprovalState<I extends ToolApprovalItem = ToolApprovalItem> {
  approve(item: I, options?: { alwaysApprove?: boolean }): void;
  reject(item: I, options?: { alwaysReject?: boolean; message?: string }): void;
}

/** A run that stopped for approvals (the SDK's RunResult). */
export interface InterruptedRun<I extends ToolApprovalItem = ToolApprovalItem> {
  readonly interruptions: readonly I[];
  readonly state: ApprovalState<I>;
}

/** How {@link reviewInterruptions} asks. */
export interface InterruptionReviewOptions extends Pick<AskOptions, "timeout" | "sourceAgent" | "sessionId" | "metadata" | "targets" | "notify" | "signal"> {
  /** Whether the person may respond instead of approving or rejecting (default true); a respond rejects, with the reply as the message. */
  allowRespond?: boolean;
  /** A JSON Schema to show with each tool's arguments, by tool name (edits are not offered). */
  argsSchemas?: Readonly<Record<string, JsonSchema>>;
}

/** What a review decided: approve, or reject with the message the model reads. */
export interface InterruptionVerdict {
  approved: boolean;
  message: string;
}

/**
 * Asks hitl about each of the run's interruptions, at once, and records
 * the answers on `run.state`: approve approves; reject rejects with the
 * person's reason, respond with their reply (the model reads either). A
 * review that gets no answer (expired, cancelled, hitl unreachable)
 * rejects with the reason: a tool never runs unreviewed. Returns the
 * verdicts, in order. Aborting `signal` withdraws the questions and
 * rejects, recording nothing.
 */
export async function reviewInterruptions<I extends ToolApprovalItem>(
  hitl: Client,
  run: InterruptedRun<I>,
  opts: InterruptionReviewOptions = {},
): Promise<InterruptionVerdict[]> {
  const verdicts = await Promise.all(run.interruptions.map((item) => verdictOf(hitl, item, opts)));
  run.interruptions.forEach((item, i) => {
    const v = verdicts[i]!;
    if (v.approved) run.state.approve(item);
    else run.state.reject(item, { message: v.message });
  });
  return verdicts;
}

/** Asks about one call. */
async function verdictOf(hitl: Client, item: ToolApprovalItem, opts: InterruptionReviewOptions): Promise<InterruptionVerdict> {
  const name = item.name ?? "a tool";
  const reject = (message: string): InterruptionVerdict => ({ approved: false, message });
  let args: unknown;
  try {
    args = JSON.parse(item.arguments || "{}");
  } catch {
    return reject(`Not run: the arguments of ${name} are not JSON.`);
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) return reject(`Not run: the arguments of ${name} are not an object.`);
  const { allowRespond = true, argsSchemas, ...ask } = opts;
  const schema = argsSchemas?.[name];
  try {
    const d = await hitl.reviewAction(name, args as Record<string, unknown>, {
      ...(ask as AskOptions<never>),
      decisions: allowRespond ? ["approve", "reject", "respond"] : ["approve", "reject"],
      ...(schema ? { argsSchema: schema } : {}),
    });
    if (d.run) return { approved: true, message: "" };
    if (d.decision === "respond") return reject(`A person answered instead of running ${name}: ${d.message}`);
    return reject(d.message ? `A person rejected ${name}: ${d.message}` : `A person rejected ${name}.`);
  } catch (err) {
    if (!(err instanceof HitlError)) throw err; // an aborted signal, or a bug
    return reject(`Not run: ${name} was not reviewed (${err.message}).`);
  }
}
