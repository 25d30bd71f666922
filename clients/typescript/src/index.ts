/**
 * Ask a person a question through a hitl server and wait for a typed answer.
 *
 * ```ts
 * import { Client } from "@hitl/client";
 *
 * const hitl = new Client(); // HITL_URL, HITL_TOKEN and HITL_AGENT from the environment
 * if (await hitl.yesNo("Deploy build 1432 to production?", { timeout: 600 })) await deploy();
 * ```
 *
 * Validation is the server's: its refusals reject with the {@link HitlError}
 * subclass of its error code.
 * @module
 */

export { Client, DEFAULT_POLL_TIMEOUT, DEFAULT_REQUEST_TIMEOUT } from "./client.js";
export type { CallOptions, ClientOptions, ListOptions, WaitOptions, YesNoOptions } from "./client.js";
export {
  Cancelled,
  Conflict,
  Expired,
  Forbidden,
  HitlError,
  InvalidAnswer,
  InvalidRequest,
  NotFound,
  RateLimited,
  Unauthorized,
  Unavailable,
  Unreachable,
} from "./errors.js";
export type { HitlErrorInit } from "./errors.js";
export { DEFAULT_URL, VERSION } from "./http.js";
export { CANCEL_REASON } from "./questions.js";
export type { ActionDecision, AskOptions, ChoiceSpec, HandoffOptions, ReviewActionOptions } from "./questions.js";
export { isTerminal } from "./types.js";
export { argsSha256, canonicalJSON, fetchReceiptKeys, ReceiptError, verifyReceipt } from "./receipt.js";
export type { ReceiptClaims, ReceiptExpectation, ReceiptKey, ReceiptKeySet } from "./receipt.js";
export { DEFAULT_WEBHOOK_TOLERANCE, verifyWebhook, WebhookVerificationError } from "./webhook.js";
export type { VerifyWebhookOptions } from "./webhook.js";
export type {
  ActionAnswer,
  ActionCall,
  ActionValue,
  Always,
  Answer,
  AnswerTypes,
  CreateRequest,
  Decision,
  Interaction,
  InteractionType,
  JsonSchema,
  Option,
  Page,
  Result,
  Status,
  Targets,
} from "./types.js";
