// History: what happened to the questions that ended — answered, expired
// or cancelled — with the value (a form's by its schema's titles), who,
// how, when and how long it took; searchable, filtered by outcome, agent,
// type and channel, a page at a time. Every row links to its question's
// detail view and offers its link.

import { h } from "./dom.js";
import { TYPE_LABELS, channelName, timeEl } from "./format.js";
import { actionArgs, changesView } from "./argsview.js";
import { codeBlock, visibleText } from "./codeview.js";
import { DECISION_LABELS, OUTCOME_KINDS, changedFields, decisionOf, fieldsText } from "./decision.js";
import { answerNode } from "./formvalue.js";
import { copyLinkButton, detailPath } from "./copylink.js";
import { cancelReason, durationText, timeToAnswer } from "./outcome.js";
import { countsOf, listPage } from "./listquery.js";
import { headline, subline } from "./summary.js";

const STATUS_LABELS = { answered: "Answered", expired: "Expired", cancelled: "Cancelled" };
const PAGE = 50;
// How long typing in the search box waits before searching, in ms.
const SEARCH_DELAY = 300;

export class History {
  // els: {list, empty, error, more, sub, form, q, status, agent, type,
  // channel}; opts: {announce(text)}
  constructor(els, opts = {}) {
    this.els = els;
    this.opts = opts;
    this.cursor = "";
    this.visible = false;
    this.loading = false;
    this.stale = true;
    this.gen = 0;
    els.more.addEventListener("click", () => this.load(false));
    for (const sel of [els.status, els.agent, els.type, els.channel]) sel.addEventListener("change", () => this.load(true));
    els.q.addEventListener("input", () => {
      clearTimeout(this.searchTimer);
      this.searchTimer = setTimeout(() => this.load(true), SEARCH_DELAY);
    });
    els.form.addEventListener("submit", (e) => {
      e.preventDefault();
      clearTimeout(this.searchTimer);
      this.load(true);
    });
    // The reset button clears the fields; the list follows once they are.
    els.form.addEventListener("reset", () => setTimeout(() => this.load(true)));
  }

  show() {
    this.visible = true;
    if (this.stale) {
      this.load(true);
      this.loadAgents();
    }
  }

  hide() {
    this.visible = false;
  }

  // reset forgets what was shown (signing out): the next show() loads
  // afresh.
  reset() {
    this.gen += 1;
    clearTimeout(this.timer);
    clearTimeout(this.searchTimer);
    this.visible = false;
    this.stale = true;
    this.cursor = "";
    this.els.list.replaceChildren();
    this.els.more.hidden = true;
    this.els.empty.hidden = true;
    this.els.error.hidden = true;
    this.els.sub.textContent = "";
    // Not form.reset(): its reset event would load the list.
    for (const el of [this.els.q, this.els.status, this.els.type, this.els.channel]) el.value = "";
    this.els.agent.replaceChildren(h("option", { value: "", text: "All agents" }));
  }

  // changed is called when an interaction ends: reload if on screen.
  changed() {
    this.stale = true;
    if (!this.visible) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.load(true), 600);
  }

  // filters is what the form asks for.
  filters() {
    const { q, status, agent, type, channel } = this.els;
    return { q: q.value.trim(), status: status.value, agent: agent.value, type: type.value, channel: channel.value };
  }

  // loadAgents fills the agent filter with every agent that asked
  // something, keeping the one chosen.
  async loadAgents() {
    const gen = this.gen;
    const r = await countsOf({});
    if (gen !== this.gen || !r.ok || !r.data?.by_agent) return;
    const sel = this.els.agent;
    const chosen = sel.value;
    const names = Object.keys(r.data.by_agent).filter(Boolean).sort((a, b) => a.localeCompare(b));
    if (chosen && !names.includes(chosen)) names.push(chosen);
    sel.replaceChildren(h("option", { value: "", text: "All agents" }), ...names.map((n) => h("option", { value: n, text: n })));
    sel.value = chosen;
  }

  async load(reset) {
    if (this.loading) {
      this.again = true;
      return;
    }
    this.loading = true;
    this.stale = false;
    const gen = this.gen;
    const f = this.filters();
    const cursor = reset ? "" : this.cursor;
    const shown = [];
    let next = cursor;
    let error = null;
    this.els.list.setAttribute("aria-busy", "true");
    // Without an outcome filter the newest page may be mostly pending
    // interactions, which are not history: read on a little.
    for (let i = 0; i < 4; i++) {
      const r = await listPage({ ...f, limit: PAGE, cursor: next });
      if (!r.ok) {
        error = r.error?.message || "The history could not be loaded.";
        break;
      }
      shown.push(...r.data.interactions.filter((it) => it.status !== "pending"));
      next = r.data.next_cursor || "";
      if (!next || shown.length >= PAGE / 2) break;
    }
    this.loading = false;
    if (gen !== this.gen) {
      this.again = false;
      return; // reset while loading
    }
    this.els.error.hidden = !error;
    this.els.error.textContent = error || "";
    if (!error) {
      if (reset) this.els.list.replaceChildren();
      this.els.list.append(...shown.map(item));
      this.cursor = next;
      this.els.more.hidden = !next;
      const n = this.els.list.children.length;
      const filtered = Object.values(f).some(Boolean);
      this.els.empty.hidden = n > 0;
      this.els.empty.textContent = filtered ? "Nothing matches these filters." : "Nothing here yet.";
      this.els.sub.textContent = n === 0 ? "" : `${n}${next ? "+" : ""} ${n === 1 ? "question" : "questions"}${filtered ? " match" : ""}.`;
    }
    this.els.list.setAttribute("aria-busy", "false");
    if (this.again) {
      this.again = false;
      this.load(true);
    }
  }
}

function item(it) {
  const res = it.result || {};
  const when = res.responded_at && !res.responded_at.startsWith("0001") ? res.responded_at : it.created_at;
  const took = timeToAnswer(it);
  const tookText = took !== null ? ` · in ${durationText(took)}` : "";
  let outcome;
  if (it.interaction_type === "action" && it.status === "answered" && decisionOf(res.value)) {
    outcome = actionOutcome(it, res, when, tookText);
  } else if (it.status === "answered") {
    outcome = [
      h("div", { class: "h-answer" }, h("span", { class: "h-label", text: "Answer" }), answerNode(it, res.value)),
      h("p", { class: "h-meta" },
        res.timed_out ? "Default used at the deadline" : `By ${res.responded_by || "someone"} via ${channelName(res.channel)}`,
        " · ", timeEl(when), tookText),
    ];
  } else {
    const why = cancelReason(res.reason);
    const text = it.status === "expired"
      ? "No answer before the deadline"
      : `Cancelled by ${res.responded_by || "the agent"}${why ? `: ${why}` : ""}`;
    outcome = h("p", { class: "h-meta" }, text, " · ", timeEl(when));
  }
  return h("li", { class: `h-item h-${it.status}`, "data-id": it.interaction_id },
    h("div", { class: "h-head" },
      h("span", { class: `status-badge status-${it.status}`, text: STATUS_LABELS[it.status] || it.status }),
      h("span", { class: `type-badge badge-${it.interaction_type}`, text: TYPE_LABELS[it.interaction_type] || it.interaction_type }),
      it.action?.name ? h("code", { class: "action-chip", text: it.action.name }) : null,
      it.source_agent ? h("span", { class: "h-agent", text: it.source_agent }) : null,
      copyLinkButton(it.interaction_id, headline(it))),
    h("p", { class: "h-question" }, h("a", { class: "h-link", href: detailPath(it.interaction_id), text: headline(it) })),
    subline(it) ? h("p", { class: "card-summary" }, h("code", { text: subline(it) })) : null,
    it.interaction_type === "action" ? actionSubject(it.action) : null,
    outcome);
}

// actionSubject is what an action was about, in short: a command, or a
// file's path.
function actionSubject(action) {
  const args = actionArgs(action);
  if (action?.name === "Bash" && typeof args.command === "string") {
    return codeBlock(args.command, { label: "Command", prompt: true, cls: "code-command code-small" });
  }
  if (typeof args.file_path === "string") return h("p", { class: "h-subject" }, h("code", { class: "code-path" }, visibleText(args.file_path)));
  return null;
}

// actionOutcome is the decision about an action: what, by whom, the
// reason or reply, and the changes of an edit.
function actionOutcome(it, res, when, tookText) {
  const v = res.value;
  const d = decisionOf(v);
  const ruled = res.channel === "rule" || !!res.rule_id;
  const label = ruled ? (d === "reject" ? "Denied by a rule" : "Allowed by a rule") : DECISION_LABELS[d];
  const msg = typeof v.message === "string" && v.message !== "" ? v.message : "";
  const fields = d === "edit" ? changedFields(res.args_diff) : [];
  let by;
  if (res.timed_out) by = "Default used at the deadline";
  else if (ruled) by = `By rule ${res.rule_id || String(res.responded_by).replace(/^rule:/, "")}`;
  else by = `By ${res.responded_by || "someone"} via ${channelName(res.channel)}`;
  return [
    h("div", { class: "h-answer" },
      h("span", { class: "h-label", text: "Decision" }),
      h("span", { class: `pill-value decision-${OUTCOME_KINDS[d]}`, text: label }),
      msg ? h("span", { class: "text-value" }, visibleText(msg)) : null,
      fields.length ? h("span", { class: "h-meta", text: `${fieldsText(fields)} changed` }) : null),
    d === "edit" && v.args && typeof v.args === "object" ? changesView(actionArgs(it.action), v.args) : null,
    h("p", { class: "h-meta" }, by, " · ", timeEl(when), tookText),
  ];
}
