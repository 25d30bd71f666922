// Risk marks: the server marks an action that a reviewer should look at
// twice (run as root, a recursive delete, a download piped into a shell,
// production…) and says why. A marked card shows a badge in its header
// (in the compact row too) and the reasons beneath its title; the a key
// asks to be pressed again before it approves one (keys.js), and an
// "Always allow…" rule for one needs an explicit confirmation
// (rulepanel.js).

import { h, icon } from "./dom.js";

// risks is why q's action is risky: a list of reasons, empty when not.
export function risks(q) {
  const list = q?.action?.risks;
  return Array.isArray(list) ? list.map((r) => String(r?.why || "")).filter(Boolean) : [];
}

// risky reports whether q's action is marked risky.
export function risky(q) {
  return risks(q).length > 0;
}

// riskBadge is the header's mark of a risky action, or null.
export function riskBadge(q) {
  if (!risky(q)) return null;
  return h("span", { class: "risk-badge", title: risks(q).join("; ") }, icon("alert"), h("span", { text: "Risky" }));
}

// riskNote says why the action is risky, beneath its title; null when
// it is not.
export function riskNote(q) {
  const why = risks(q);
  if (why.length === 0) return null;
  return h("p", { class: "risk-note" }, icon("alert"),
    h("span", {}, h("strong", { text: "Risky: " }), why.join("; ")));
}
