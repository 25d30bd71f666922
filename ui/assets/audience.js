// Who a question is for, and where it comes from: a question targeted at
// someone else is labelled "for bob" and sinks below the reviewer's own;
// the project the agent works in and a short coloured tag of its session
// tell two sessions of one agent apart at a glance.

import { h } from "./dom.js";

let viewer = { name: "", groups: [] };

// How many colours session tags take (session-hue-0 … in action.css).
const HUES = 12;

// setViewer records who is signed in ({name, groups}).
export function setViewer(user) {
  viewer = { name: user?.name || "", groups: Array.isArray(user?.groups) ? user.groups : [] };
}

// forOthers is whom q is for when that is not the signed-in person
// ("bob", "bob, sre"), or "" when it is theirs (or anyone's).
export function forOthers(q) {
  const users = q?.targets?.users || [];
  const groups = q?.targets?.groups || [];
  if (!viewer.name || (users.length === 0 && groups.length === 0)) return "";
  if (users.includes(viewer.name) || groups.some((g) => viewer.groups.includes(g))) return "";
  return [...users, ...groups].join(", ");
}

// projectOf is the directory the agent works in: the server's project,
// the metadata's project or cwd, or a shell command's cwd; "" if unknown.
export function projectOf(q) {
  const m = q?.metadata || {};
  const p = q?.project || (typeof m.project === "string" && m.project) || (typeof m.cwd === "string" && m.cwd) || q?.action?.input?.cwd || "";
  return String(p);
}

// projectName is a project's last path element ("/home/dev/shop" → "shop").
export function projectName(p) {
  const parts = String(p).split(/[\\/]/).filter(Boolean);
  return parts.length ? parts[parts.length - 1] : p;
}

// sessionTag is a short tag of a session id, coloured by the id, so two
// sessions of one agent differ at a glance; null without a session. With
// pick, it is a button that shows only that session's questions.
export function sessionTag(id, pick = null) {
  if (!id) return null;
  let hash = 0;
  for (const ch of String(id)) hash = (hash * 31 + ch.codePointAt(0)) >>> 0;
  const short = String(id).replace(/[^0-9a-z]/gi, "").slice(0, 6) || String(id).slice(0, 6);
  return h(pick ? "button" : "span", {
    class: `session-tag session-hue-${hash % HUES}`,
    type: pick ? "button" : null,
    title: pick ? `Session ${id}: show only its questions` : `Session ${id}`,
    onclick: pick,
  },
    h("span", { class: "sr-only", text: `session ${id}` }), h("span", { "aria-hidden": "true", text: short }));
}

// projectChip names the project in a card's header; null when unknown.
// With pick, it is a button that shows only that project's questions.
export function projectChip(q, pick = null) {
  const p = projectOf(q);
  if (!p) return null;
  return h(pick ? "button" : "span", {
    class: "card-project",
    type: pick ? "button" : null,
    title: pick ? `${p}: show only its questions` : p,
    onclick: pick ? () => pick(p) : null,
  }, h("span", { class: "sr-only", text: "project " }), projectName(p));
}

// forChip labels a question meant for someone else; null when it is the
// reviewer's own.
export function forChip(q) {
  const who = forOthers(q);
  return who ? h("span", { class: "card-for", text: `for ${who}` }) : null;
}
