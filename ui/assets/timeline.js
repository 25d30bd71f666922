// The timeline of one interaction, built from its events
// (GET /api/v1/interactions/{id}/events): asked, told on Slack, answered,
// expired, cancelled, a rule made — who, what, how and when.

import { h } from "./dom.js";
import { channelName } from "./format.js";
import { answerNode } from "./formvalue.js";
import { cancelReason, durationText } from "./outcome.js";
import { actionOutcome } from "./decision.js";

const clock = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

// timelineList renders events of interaction it as an ordered list.
export function timelineList(it, events) {
  const start = Date.parse(it.created_at);
  const ol = h("ol", { class: "timeline" });
  for (const ev of events) {
    const at = new Date(ev.at);
    const after = Number.isNaN(start) || ev.type === "created" ? "" : ` · after ${durationText(Math.max(0, at.getTime() - start))}`;
    ol.append(h("li", { class: `tl-item tl-${ev.type}` },
      h("span", { class: "tl-dot", "aria-hidden": "true" }),
      h("p", { class: "tl-when" }, h("time", { datetime: at.toISOString(), text: clock.format(at) }), after),
      h("p", { class: "tl-what", text: sentence(it, ev) }),
      extra(it, ev)));
  }
  return ol;
}

// sentence says what an event was.
function sentence(it, ev) {
  const by = ev.actor || "";
  const via = channelName(ev.channel);
  switch (ev.type) {
    case "created":
      return `Asked by ${by || "an agent"} via ${via}`;
    case "notified":
      return `Sent to ${via}${by ? ` for ${by}` : ""}`;
    case "answered":
      if (ev.channel === "timeout") return "The deadline passed: the agent got the default answer";
      if (ev.channel === "rule") return `Decided by ${by.startsWith("rule:") ? `rule ${by.slice(5)}` : "a rule"}`;
      return `Answered by ${by || "someone"} via ${via}`;
    case "expired":
      return "Expired: no answer before the deadline, the agent was told so";
    case "cancelled": {
      const why = cancelReason(ev.detail);
      return `Cancelled by ${by || "the agent"}${why ? `: ${why}` : ""}`;
    }
    case "reminded":
    case "escalated":
      return stepSentence(ev);
    case "rule_created":
      return `A rule was made from this answer (${ev.detail})`;
    case "rule_revoked":
      return `Rule ${ev.detail} was revoked`;
    default:
      return `${ev.type}${by ? ` by ${by}` : ""}${ev.channel ? ` via ${via}` : ""}`;
  }
}

// stepSentence says what a step of the escalation did, from its detail
// ({step, remind, added, channels}).
function stepSentence(ev) {
  let d = {};
  try {
    d = JSON.parse(ev.detail || "{}");
  } catch {
    // an unreadable detail still gets its sentence
  }
  const on = d.channels?.length ? ` on ${d.channels.map(channelName).join(", ")}` : "";
  if (ev.type === "reminded") return `Reminder sent${on}`;
  const added = [...(d.added?.groups || []), ...(d.added?.users || [])];
  return `Escalated to ${added.join(", ") || "more people"}${on}`;
}

// extra is what an event adds below its sentence: the answer given, or
// where a notification went.
function extra(it, ev) {
  if (ev.type === "answered" && it.interaction_type === "action") {
    const o = actionOutcome(it);
    return o ? h("p", { class: "tl-detail", text: o.text }) : null;
  }
  if (ev.type === "answered" && it.result && it.result.value !== undefined) {
    return h("div", { class: "tl-value" }, answerNode(it, it.result.value));
  }
  if (ev.type === "notified" && ev.detail) return h("p", { class: "tl-detail", text: ev.detail });
  return null;
}
