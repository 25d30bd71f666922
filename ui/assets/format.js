// Formatting of times, types, channels and answer values for display.

import { h } from "./dom.js";

export const TYPE_LABELS = {
  approval: "Approval",
  single_choice: "Choose one",
  multi_choice: "Choose any",
  form: "Form",
  free_text: "Text",
  action: "Action",
  handoff: "Handoff",
};

const CHANNELS = {
  web: "the web inbox",
  api: "the API",
  cli: "the CLI",
  mcp: "MCP",
  slack: "Slack",
  timeout: "the default at the deadline",
  rule: "a rule",
};

// channelName names a channel for a sentence ("via Slack").
export function channelName(ch) {
  return CHANNELS[ch] || ch || "an unknown channel";
}

// answeredBy is the sentence shown when someone answered.
export function answeredBy(by, channel) {
  return `Answered by ${by || "someone"} via ${channelName(channel)}.`;
}

// countdown formats the time left until a deadline, or "" when passed.
export function countdown(ms) {
  if (ms <= 0) return "";
  const s = Math.ceil(ms / 1000);
  const d = Math.floor(s / 86400);
  const hrs = Math.floor((s % 86400) / 3600);
  const min = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (d > 0) return `${d} d ${hrs} h left`;
  if (hrs > 0) return `${hrs} h ${String(min).padStart(2, "0")} min left`;
  return `${min}:${String(sec).padStart(2, "0")} left`;
}

// spokenDuration is a calm, rounded duration for screen readers.
export function spokenDuration(ms) {
  const min = Math.round(ms / 60000);
  if (min >= 120) return `${Math.round(min / 60)} hours`;
  if (min >= 60) return "1 hour";
  if (min >= 2) return `${min} minutes`;
  if (ms >= 50000) return "1 minute";
  return `${Math.max(1, Math.round(ms / 1000))} seconds`;
}

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
const absolute = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

// ago formats a past time relative to now ("3 minutes ago").
export function ago(date, now = Date.now()) {
  const s = Math.round((date.getTime() - now) / 1000);
  const abs = Math.abs(s);
  if (abs < 45) return "just now";
  if (abs < 3600) return relative.format(Math.round(s / 60), "minute");
  if (abs < 86400) return relative.format(Math.round(s / 3600), "hour");
  if (abs < 86400 * 30) return relative.format(Math.round(s / 86400), "day");
  return absolute.format(date);
}

// timeEl is a <time> showing ago(date) with the exact time as a tooltip.
export function timeEl(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return h("span", { text: "" });
  return h("time", { datetime: d.toISOString(), title: absolute.format(d), text: ago(d) });
}

// optionLabel returns the label of the option with key, or the key.
function optionLabel(options, key) {
  const o = (options || []).find((x) => x.key === key);
  return o ? o.label : String(key);
}

// valueNode renders an answer value for the interaction it answers.
export function valueNode(it, value) {
  if (value === undefined || value === null) return h("span", { class: "muted", text: "no value" });
  switch (it.interaction_type) {
    case "approval": {
      const opts = it.options || [];
      const label = value === true ? (opts[0]?.label || "Approve") : (opts[1]?.label || "Reject");
      return h("span", { class: `pill-value ${value === true ? "is-yes" : "is-no"}`, text: label });
    }
    case "single_choice":
      return h("span", { class: "pill-value", text: optionLabel(it.options, value) });
    case "multi_choice":
      if (!Array.isArray(value) || value.length === 0) return h("span", { class: "muted", text: "none chosen" });
      return h("span", {}, value.map((k) => h("span", { class: "pill-value", text: optionLabel(it.options, k) })));
    case "form":
      return objectNode(value);
    default:
      return h("span", { class: "text-value", text: typeof value === "string" ? value : JSON.stringify(value) });
  }
}

function objectNode(v) {
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    return h("span", { class: "text-value", text: Array.isArray(v) ? v.join(", ") : String(v) });
  }
  const dl = h("dl", { class: "kv" });
  for (const [k, val] of Object.entries(v)) {
    dl.append(h("dt", { text: k }), h("dd", {}, objectNode(val)));
  }
  return dl;
}
