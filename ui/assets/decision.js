// What was decided about an action, in words: for an ended card ("✏️
// Edited and approved by alice via the web inbox: command changed.") and
// for the history.

import { channelName } from "./format.js";

// DECISIONS are the four decisions' names, in the usual order.
export const DECISIONS = ["approve", "edit", "reject", "respond"];

// decisionOf returns an answer value's decision ("approve", "edit",
// "reject", "respond"), or "" when it is none of them.
export function decisionOf(value) {
  const d = value && typeof value === "object" ? value.decision : value;
  return DECISIONS.includes(d) ? d : "";
}

// DECISION_LABELS name a decision for a badge.
export const DECISION_LABELS = {
  approve: "Approved",
  edit: "Edited and approved",
  reject: "Rejected",
  respond: "Answered instead",
};

// OUTCOME_KINDS give each decision's outcome its look: approved, edited,
// rejected or responded.
export const OUTCOME_KINDS = { approve: "approved", edit: "edited", reject: "rejected", respond: "responded" };

// changedFields lists the top-level arguments an edit changed, from its
// RFC 6902 patch (result.args_diff).
export function changedFields(patch) {
  if (!Array.isArray(patch)) return [];
  const keys = new Set();
  for (const op of patch) {
    const p = typeof op?.path === "string" ? op.path : "";
    const first = p.split("/")[1];
    if (first !== undefined) keys.add(first.replace(/~1/g, "/").replace(/~0/g, "~"));
  }
  return [...keys];
}

// fieldsText lists field names for a sentence ("command and timeout").
export function fieldsText(names) {
  if (names.length <= 1) return names.join("");
  return `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

// byText is " by alice via Slack", or " by rule <id>".
function byText(res) {
  if (res.channel === "rule" || res.rule_id) return ` by rule ${res.rule_id || String(res.responded_by || "").replace(/^rule:/, "")}`;
  return ` by ${res.responded_by || "someone"} via ${channelName(res.channel)}`;
}

// actionOutcome says what became of an answered action: {kind, text}, or
// null when its result is not a decision.
export function actionOutcome(it) {
  const res = it?.result || {};
  const v = res.value;
  const d = decisionOf(v);
  if (!d) return null;
  const msg = typeof v.message === "string" && v.message !== "" ? v.message : "";
  const ruled = res.channel === "rule" || !!res.rule_id;
  if (res.timed_out) {
    const what = d === "reject" ? `rejected${msg ? `: ${msg}` : "."}` : d === "respond" ? `answered: ${msg}` : "approved.";
    return { kind: OUTCOME_KINDS[d], text: `No one answered in time, so the default was used: ${what}` };
  }
  let text;
  switch (d) {
    case "approve":
      text = ruled ? `Allowed${byText(res)}.` : `Approved${byText(res)}.`;
      break;
    case "edit": {
      const fields = changedFields(res.args_diff);
      text = `✏️ Edited and approved${byText(res)}${fields.length ? `: ${fieldsText(fields)} changed` : ""}.`;
      break;
    }
    case "reject":
      text = `${ruled ? "Denied" : "Rejected"}${byText(res)}${msg ? `: ${msg}` : " (no reason given)."}`;
      break;
    default:
      text = `Answered instead${byText(res)}: ${msg}`;
  }
  return { kind: OUTCOME_KINDS[d], text };
}
