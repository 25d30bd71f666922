// One question inside <hitl-prompt> (embed.js): the agent, the question
// and its context, the answer widget of its type (widgets.js, as the
// inbox has them), the countdown and what the deadline does (stakes.js),
// and, once it is over, how it ended. A handoff shows the agent's message
// and a reply box.

import { h, icon, uid } from "./dom.js";
import { buildWidget } from "./widgets.js";
import { parseServerErrors } from "./form.js";
import { renderMarkdown } from "./markdown.js";
import { countdown, spokenDuration, TYPE_LABELS } from "./format.js";
import { Stakes } from "./stakes.js";
import { RawJSON } from "./api.js";

// Where an answer came from, for "Answered by alice in the inbox".
const PLACES = {
  web: "in the inbox",
  slack: "in Slack",
  email: "by email",
  push: "from a notification",
  embed: "in the chat",
  api: "through the API",
  cli: "from the command line",
  mcp: "through MCP",
  rule: "by a rule",
};

// placeOf names where an answer through channel was given.
function placeOf(channel) {
  return PLACES[channel] || (channel ? `via ${channel}` : "elsewhere");
}

// plain turns an answer value into what the events carry: RawJSON (an
// action's arguments as typed) as the JSON it holds.
function plain(v) {
  if (v instanceof RawJSON) {
    try {
      return JSON.parse(v.text);
    } catch {
      return v.text;
    }
  }
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

// Prompt is one question; host gives send(value) and load(id) (the API
// with the element's credentials) and emit(name, detail).
export class Prompt {
  constructor(q, host) {
    this.q = q;
    this.host = host;
    this.handoff = q.interaction_type === "handoff";
    this.deadline = Date.parse(q.deadline);
    this.ended = false;
    this.sending = false;
    this.ids = { question: uid("hp-q"), error: uid("hp-err") };
    this.widget = buildWidget(this.handoff ? { ...q, question: q.message } : q, this.ids, (v) => this.submit(v), { rules: false });
    this.build();
    this.tick(Date.now());
  }

  build() {
    const q = this.q;
    const text = this.handoff ? q.message : q.question;
    this.countdownEl = h("span", { class: "countdown hp-countdown", part: "countdown", role: "timer", "aria-live": "off" }, icon("clock"), h("span", { class: "hp-countdown-text" }));
    this.stakes = this.handoff ? null : new Stakes(q, this.deadline, () => this.submit(q.default_response), this.host.load);
    if (this.stakes) this.stakes.el.setAttribute("part", "deadline");
    this.errorEl = h("p", { class: "card-error-text hp-error", part: "error", id: this.ids.error, role: "alert", hidden: true });
    this.outcomeEl = h("p", { class: "hp-outcome", part: "outcome", role: "status", hidden: true });
    this.claimEl = h("p", { class: "hp-claim", part: "claim", hidden: true });
    const w = this.widget;
    const hint = w.hint instanceof Node ? w.hint : null;
    this.form = h("form", {
      class: "answer hp-answer", part: "answer", novalidate: true,
      onsubmit: (e) => {
        e.preventDefault();
        this.submit();
      },
      onkeydown: (e) => this.onKey(e),
    },
    w.body,
    this.errorEl,
    h("div", { class: "actions hp-actions", part: "actions" },
      h("span", { class: "kbd-hint" }, h("kbd", { text: "Ctrl" }), "+", h("kbd", { text: "Enter" }), hint || (typeof w.hint === "string" ? w.hint : " to submit")),
      h("span", { class: "actions-buttons" }, w.actions)));
    this.el = h("article", {
      class: `hp-prompt hp-${q.interaction_type}`, part: `prompt prompt-${q.interaction_type}`,
      "aria-labelledby": this.ids.question, "data-interaction-id": q.interaction_id, "data-state": "pending",
    },
    h("header", { class: "hp-head", part: "header" },
      h("span", { class: `type-badge badge-${q.interaction_type}`, part: "badge", text: TYPE_LABELS[q.interaction_type] || q.interaction_type }),
      q.source_agent ? h("span", { class: "hp-agent", part: "agent", text: q.source_agent }) : null,
      this.countdownEl),
    this.handoff
      ? h("p", { class: "handoff-note hp-handoff-note", part: "handoff-note" }, icon("reply"),
        h("span", { text: "The agent handed this conversation to a person — you can reply now." }))
      : null,
    h("p", { class: "question hp-question", part: "question", id: this.ids.question, text: text }),
    q.context ? h("div", { class: "context md hp-context", part: "context" }, renderMarkdown(q.context)) : null,
    w.view ? h("div", { class: "hp-action", part: "action" }, w.view) : null,
    this.claimEl,
    this.stakes ? this.stakes.el : null,
    this.form,
    this.outcomeEl);
  }

  // arrivalText is what the live region says when the question arrives.
  arrivalText() {
    const who = this.q.source_agent || "The agent";
    if (this.handoff) return `${who} handed the conversation to you: ${this.q.message}`;
    const left = this.deadline - Date.now();
    const within = Number.isFinite(left) && left > 0 ? ` Answer within ${spokenDuration(left)}.` : "";
    return `${who} asks: ${this.q.question}${within}`;
  }

  tick(now) {
    if (this.ended) return;
    const left = this.deadline - now;
    const text = this.countdownEl.querySelector(".hp-countdown-text");
    if (!Number.isFinite(left)) {
      this.countdownEl.hidden = true;
      return;
    }
    text.textContent = left > 0 ? countdown(left) : "time is up";
    this.countdownEl.classList.toggle("is-soon", left > 0 && left < 5 * 60000);
    this.countdownEl.classList.toggle("is-urgent", left > 0 && left < 60000);
    this.stakes?.tick(now);
  }

  onKey(e) {
    if (e.key !== "Enter" || !(e.ctrlKey || e.metaKey) || e.altKey || e.shiftKey) return;
    e.preventDefault();
    if (this.widget.key?.(e.target)) return;
    const v = this.widget.keyValue(e.target);
    this.submit(v);
  }

  // submit sends value, or what the widget holds when value is undefined.
  async submit(value) {
    if (this.ended || this.sending) return;
    this.showError("");
    if (value === undefined) {
      const r = this.widget.read();
      if (!r.ok) {
        this.showError(r.message);
        r.first?.focus?.();
        return;
      }
      value = r.value;
    }
    this.sending = true;
    this.el.setAttribute("aria-busy", "true");
    this.form.inert = true;
    const res = await this.host.send(value);
    this.sending = false;
    this.el.removeAttribute("aria-busy");
    if (res.ok) {
      const here = this.widget.sentText ? this.widget.sentText(value) : this.handoff ? "You replied." : "Answered here.";
      this.end("answered", here, { here: true, by: res.data?.result?.responded_by ?? null, channel: "embed" });
      this.host.emit("hitl-answered", { interactionId: this.q.interaction_id, value: plain(value) });
      return;
    }
    if (this.ended) return; // the stream said how it ended meanwhile
    this.form.inert = false;
    const msg = res.error?.message || "The answer was not accepted.";
    switch (res.status) {
      case 422: {
        const rest = this.widget.showErrors((this.widget.parse || parseServerErrors)(msg));
        this.showError(rest.length ? rest.join(" ") : "Some fields need attention.");
        break;
      }
      case 409:
        // Answered first by someone else, or taken (claimed) by them.
        this.showError(res.error?.message || "Someone else answered this question first.");
        break;
      case 410:
        this.showError("This question is over: it expired or was cancelled.");
        break;
      case 0:
        this.showError("hitl could not be reached. Try again.");
        break;
      default:
        this.showError(msg);
    }
  }

  showError(text) {
    this.errorEl.textContent = text;
    this.errorEl.hidden = !text;
  }

  // resolved is hitl:resolved: someone answered (perhaps this prompt).
  resolved(m) {
    if (this.ended) return;
    if (this.sending && m.channel === "embed") return; // the answer's own response ends it
    if (m.timed_out) {
      this.end("expired", this.stakes ? this.stakes.expiredText(true) : "Expired: the agent got the default answer.", { by: m.responded_by, channel: m.channel });
      return;
    }
    const verb = this.handoff ? "Replied" : "Answered";
    this.end("answered", `${verb} by ${m.responded_by || "someone"} ${placeOf(m.channel)}.`, { here: false, by: m.responded_by, channel: m.channel });
  }

  // cancelled is hitl:cancel: the deadline, the agent, or an answer (whose
  // hitl:resolved came first).
  cancelled(reason) {
    if (this.ended || reason === "answered") return;
    if (reason === "timeout") {
      this.end("expired", this.stakes ? this.stakes.expiredText() : "Expired: nobody replied in time.", {});
      return;
    }
    const why = reason && reason !== "agent_cancelled" ? `: ${reason}` : ".";
    this.end("cancelled", `Cancelled by the agent${why}`, { reason: reason === "agent_cancelled" ? null : reason });
  }

  // progress is hitl:progress: a claim says who is on it.
  progress(m) {
    if (this.ended) return;
    const by = m.claimed?.by;
    this.claimEl.textContent = by ? `${by} is answering this (claimed ${placeOf(m.claimed.channel)}).` : "";
    this.claimEl.hidden = !by;
  }

  // gone ends a question that ended while the connection was down.
  gone() {
    this.end("ended", "This question ended while the connection was down.", {});
  }

  end(outcome, text, detail) {
    if (this.ended) return;
    this.ended = true;
    this.el.dataset.state = outcome;
    if (detail.here) this.el.dataset.here = "true";
    this.form.remove();
    this.stakes?.el.remove();
    this.claimEl.remove();
    this.countdownEl.hidden = true;
    this.outcomeEl.textContent = text;
    this.outcomeEl.hidden = false;
    this.host.emit("hitl-ended", { interactionId: this.q.interaction_id, outcome, text, ...detail });
  }
}
