// What happens at a card's deadline, said on the card: "If unanswered by
// 14:32 (in 4:48): the agent gets “info”" or "…: the agent stops". The
// live message carries the deadline and the default answer but not
// on_timeout, so a card with a default asks the server once which it is.

import { h } from "./dom.js";
import { countdown } from "./format.js";
import { getInteraction } from "./api.js";

// clock formats a deadline as a local clock time, with the date when it is
// not today.
function clock(ms, now) {
  const d = new Date(ms);
  const time = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return new Date(now).toDateString() === d.toDateString()
    ? time
    : `${d.toLocaleDateString([], { month: "short", day: "numeric" })} ${time}`;
}

// defaultText renders a default answer for the stakes line.
function defaultText(q) {
  const v = q.default_response;
  if (q.interaction_type === "action") return decisionText(v);
  if (q.interaction_type === "approval") return v === true ? "approve" : v === false ? "reject" : JSON.stringify(v);
  const label = (key) => q.options?.find((o) => o.key === key)?.label ?? key;
  if (q.interaction_type === "single_choice") return label(v);
  if (q.interaction_type === "multi_choice" && Array.isArray(v)) return v.map(label).join(", ") || "nothing";
  const s = typeof v === "string" ? v : JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 79)}…` : s;
}

// decisionText renders an action's default decision: "reject: nobody
// answered", "approve".
function decisionText(v) {
  const d = typeof v === "object" && v ? v.decision : v;
  const words = { approve: "approve", edit: "approve as edited", reject: "reject", respond: "respond" }[d] || JSON.stringify(v);
  const msg = typeof v?.message === "string" && v.message ? `: ${v.message}` : "";
  const s = `${words}${msg}`;
  return s.length > 80 ? `${s.slice(0, 79)}…` : s;
}

// Stakes is the line of one card; useDefault() answers with the default
// (its "Use default" button, there when the question has one); load(id)
// fetches an interaction (default: the inbox's getInteraction).
export class Stakes {
  constructor(q, deadline, useDefault, load = getInteraction) {
    this.q = q;
    this.load = load;
    this.deadline = deadline;
    this.hasDefault = q.default_response !== null && q.default_response !== undefined;
    // Without a default the deadline can only end the question; a listed
    // interaction says what happens, a live message does not.
    this.onTimeout = this.hasDefault ? (q.on_timeout || null) : "cancel";
    this.outcomeEl = h("span", { class: "stakes-outcome" });
    this.whenEl = h("span", { class: "stakes-when" });
    const use = this.hasDefault
      ? h("button", { type: "button", class: "btn btn-quiet btn-small stakes-use", onclick: useDefault },
        "Use default", h("span", { class: "sr-only", text: ` (${defaultText(q)}): ${q.question.length > 60 ? `${q.question.slice(0, 59)}…` : q.question}` }))
      : null;
    this.el = h("div", { class: "stakes", hidden: !Number.isFinite(deadline) && !use },
      h("p", { class: "stakes-line", hidden: !Number.isFinite(deadline) }, this.whenEl, this.outcomeEl), use);
    if (this.hasDefault && !this.onTimeout) this.fetch();
    this.render();
  }

  async fetch() {
    const r = await this.load(this.q.interaction_id);
    if (!r.ok) return;
    this.onTimeout = r.data.on_timeout === "default" ? "default" : "cancel";
    this.q.on_timeout = this.onTimeout; // a card built again does not ask again
    this.render();
  }

  // outcome says what the agent gets at the deadline.
  outcome() {
    if (this.onTimeout === "default") return h("span", {}, "the agent gets ", h("strong", { class: "stakes-default", text: `“${defaultText(this.q)}”` }));
    if (this.onTimeout === "cancel") return "the agent stops (no answer)";
    return "…";
  }

  render() {
    this.outcomeEl.replaceChildren(this.outcome());
    this.tick(Date.now());
  }

  // tick refreshes the time left.
  tick(now) {
    if (!Number.isFinite(this.deadline)) return;
    const left = this.deadline - now;
    this.whenEl.textContent = left > 0
      ? `If unanswered by ${clock(this.deadline, now)} (${countdown(left)}): `
      : `At ${clock(this.deadline, now)}: `;
  }

  // expiredText is the outcome of a card whose deadline passed; withDefault
  // says the server applied the default answer.
  expiredText(withDefault = false) {
    const at = clock(this.deadline, Date.now());
    if ((withDefault || this.onTimeout === "default") && this.hasDefault) return `Expired at ${at} — the agent got “${defaultText(this.q)}”.`;
    if (withDefault) return `Expired at ${at} — the agent got the default answer.`;
    return `Expired at ${at} — the agent got no answer.`;
  }
}
