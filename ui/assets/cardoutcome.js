// What a card says when its question ended elsewhere, keeping the
// information: the value and who chose it ("Hold — chosen by alice via
// the API"), and the agent's reason for cancelling.

import { channelName } from "./format.js";
import { MOVED_ON } from "./card.js";

// The AI-Parrot HITL contract's hitl:cancel reasons that are not an
// agent's own words.
const NOT_A_REASON = new Set(["", "timeout", "answered", "agent_cancelled"]);

// agentReason is the reason an agent gave in hitl:cancel, or "".
export function agentReason(reason) {
  return NOT_A_REASON.has(reason || "") ? "" : String(reason);
}

// cancelledText is a card's outcome when its agent cancelled it with a
// reason.
export function cancelledText(reason) {
  return `Cancelled by the agent: ${reason}`;
}

// valueText renders an answer's value for a sentence: an option's label,
// Approved/Rejected (or the approval's own labels), quoted text, or a
// form's field count.
export function valueText(q, value) {
  const label = (key) => q.options?.find((o) => o.key === key)?.label ?? String(key);
  switch (q.interaction_type) {
    case "approval": {
      // The approval's own labels, unless they are the plain ones.
      const opts = q.options?.length === 2 ? q.options : [];
      if (value === true) return opts[0] && opts[0].label !== "Approve" ? opts[0].label : "Approved";
      if (value === false) return opts[1] && opts[1].label !== "Reject" ? opts[1].label : "Rejected";
      return "";
    }
    case "single_choice":
      return typeof value === "string" ? label(value) : "";
    case "multi_choice":
      return Array.isArray(value) ? (value.map(label).join(", ") || "Nothing chosen") : "";
    case "free_text":
    case "handoff":
      return typeof value === "string" ? `“${value.length > 120 ? `${value.slice(0, 119)}…` : value}”` : "";
    case "form":
      return value && typeof value === "object" ? "The form was filled in" : "";
    default:
      return "";
  }
}

// chosenText is the outcome of a question answered elsewhere, with its
// value when known: "Hold — chosen by alice via the API."
export function chosenText(q, result) {
  const by = result.responded_by || "someone";
  const via = channelName(result.channel);
  const v = result.value === undefined ? "" : valueText(q, result.value);
  if (q.interaction_type === "handoff") return v ? `${by} replied via ${via}: ${v}` : `${by} replied via ${via}.`;
  if (!v) return `Answered by ${by} via ${via}.`;
  const verb = q.interaction_type === "free_text" ? "answered" : "chosen";
  return `${v} — ${verb} by ${by} via ${via}.`;
}

// consensusOutcome is the outcome of a question decided by votes, and
// its look: a vetoed or rejected approval in the rejection style ("Vetoed
// by bob."), never as a success.
export function consensusOutcome(q, result) {
  const reason = String(result.reason || "");
  if (q.interaction_type === "approval" && result.value === false) {
    const veto = /^vetoed by (.+)$/.exec(reason);
    if (veto) return { text: `Vetoed by ${veto[1]}.`, look: "rejected" };
    const why = reason ? `: ${reason}` : "";
    return { text: `Rejected${why || ` by ${result.responded_by || "the votes"}`}.`, look: "rejected" };
  }
  return { text: chosenText(q, result), look: "" };
}

// endText is the outcome of a card whose question ended without an
// answer: what the agent got at the deadline, the agent's reason for
// cancelling, or the AI-Parrot HITL contract's words for a question the
// agent withdrew.
export function endText(card, reason) {
  if (reason === "timeout") return card.stakes.expiredText();
  const why = agentReason(reason);
  return why ? cancelledText(why) : MOVED_ON;
}
