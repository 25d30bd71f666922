// What became of an interaction, in words shared by the detail view and
// History: who answered and how, why it ended otherwise, and how long the
// answer took.

import { channelName } from "./format.js";

// endedAt is when an ended interaction ended, or null.
export function endedAt(it) {
  const at = it.result?.responded_at;
  if (!at || at.startsWith("0001")) return null;
  const d = new Date(at);
  return Number.isNaN(d.getTime()) ? null : d;
}

// timeToAnswer is how long a person took to answer, in ms; null when no
// person answered (the default at the deadline, a rule, not answered).
export function timeToAnswer(it) {
  const res = it.result;
  if (it.status !== "answered" || !res || res.timed_out || res.channel === "rule") return null;
  const end = endedAt(it);
  const start = Date.parse(it.created_at);
  if (!end || Number.isNaN(start)) return null;
  return Math.max(0, end.getTime() - start);
}

// durationText is a duration for reading: "45 s", "2 min 5 s", "3 h 10
// min", "2 d 4 h".
export function durationText(ms) {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return s % 60 ? `${min} min ${s % 60} s` : `${min} min`;
  const hrs = Math.floor(min / 60);
  if (hrs < 24) return min % 60 ? `${hrs} h ${min % 60} min` : `${hrs} h`;
  const d = Math.floor(hrs / 24);
  return hrs % 24 ? `${d} d ${hrs % 24} h` : `${d} d`;
}

// cancelReason is the reason an agent gave for cancelling, or "" when it
// gave none.
export function cancelReason(reason) {
  return reason && reason !== "agent_cancelled" ? reason : "";
}

// outcomeSentence says what became of an ended interaction, without the
// value: "Answered by alice via Slack", "Expired: no answer before the
// deadline", "Cancelled by deployer: found a safer plan".
export function outcomeSentence(it) {
  const res = it.result || {};
  switch (it.status) {
    case "answered":
      if (res.timed_out) return "The deadline passed, so the default answer was used";
      if (res.channel === "rule") return `Decided by rule ${res.rule_id || String(res.responded_by || "").replace(/^rule:/, "")}`;
      return `Answered by ${res.responded_by || "someone"} via ${channelName(res.channel)}`;
    case "expired":
      return "Expired: no answer before the deadline";
    case "cancelled": {
      const why = cancelReason(res.reason);
      return `Cancelled by ${res.responded_by || "the agent"}${why ? `: ${why}` : ""}`;
    }
    default:
      return "Waiting for an answer";
  }
}
