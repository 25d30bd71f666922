/**
 * The interrupt cases the server's tests and both clients' share
 * (testdata/agent-inbox.json), and the camelCase that langchain JS writes
 * Python's HITL middleware shape in.
 */

import { readFileSync } from "node:fs";
import { join } from "node:path";

import { REPO } from "./server.js";

/** A HumanInterrupt case: the interrupt, the decisions it allows, the person's answer, the HumanResponse. */
export interface HumanInterruptCase {
  name: string;
  interrupt: any;
  decisions: string[];
  answer: unknown;
  response: unknown;
}

/** A HITL middleware case: the request, each action's decisions, the answers in order, the response. */
export interface HITLRequestCase {
  name: string;
  request: any;
  decisions: string[][];
  answers: unknown[];
  response: any;
}

/** The cases of testdata/agent-inbox.json. */
export const cases: { human_interrupt: HumanInterruptCase[]; hitl_request: HITLRequestCase[] } = JSON.parse(
  readFileSync(join(REPO, "testdata", "agent-inbox.json"), "utf8"),
);

const camelKeys: Record<string, string> = {
  action_requests: "actionRequests",
  review_configs: "reviewConfigs",
  action_name: "actionName",
  allowed_decisions: "allowedDecisions",
  args_schema: "argsSchema",
  edited_action: "editedAction",
};

/** Returns v with the HITL middleware's snake_case keys in camelCase (arguments left as they are). */
export function camel(v: any): any {
  if (Array.isArray(v)) return v.map(camel);
  if (typeof v !== "object" || v === null) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [camelKeys[k] ?? k, k === "args" ? x : camel(x)]));
}
