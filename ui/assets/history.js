// History: recent answered, expired and cancelled interactions, with the
// value, who answered, when and through which channel.

import { h } from "./dom.js";
import { listInteractions } from "./api.js";
import { TYPE_LABELS, channelName, timeEl, valueNode } from "./format.js";
import { actionArgs, changesView } from "./argsview.js";
import { codeBlock, visibleText } from "./codeview.js";
import { DECISION_LABELS, OUTCOME_KINDS, changedFields, decisionOf, fieldsText } from "./decision.js";

const STATUS_LABELS = { answered: "Answered", expired: "Expired", cancelled: "Cancelled" };
const PAGE = 50;

export class History {
  // els: {list, empty, error, more, status}
  constructor(els) {
    this.els = els;
    this.cursor = "";
    this.visible = false;
    this.loading = false;
    this.stale = true;
    this.gen = 0;
    els.more.addEventListener("click", () => this.load(false));
    els.status.addEventListener("change", () => this.load(true));
  }

  show() {
    this.visible = true;
    if (this.stale) this.load(true);
  }

  hide() {
    this.visible = false;
  }

  // reset forgets what was shown (signing out): the next show() loads
  // afresh.
  reset() {
    this.gen += 1;
    clearTimeout(this.timer);
    this.visible = false;
    this.stale = true;
    this.cursor = "";
    this.els.list.replaceChildren();
    this.els.more.hidden = true;
    this.els.empty.hidden = true;
    this.els.error.hidden = true;
    this.els.status.value = "";
  }

  // changed is called when an interaction ends: reload if on screen.
  changed() {
    this.stale = true;
    if (!this.visible) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.load(true), 600);
  }

  async load(reset) {
    if (this.loading) {
      this.again = true;
      return;
    }
    this.loading = true;
    this.stale = false;
    const gen = this.gen;
    const status = this.els.status.value;
    const cursor = reset ? "" : this.cursor;
    const shown = [];
    let next = cursor;
    let error = null;
    // Without a status filter the newest page may be mostly pending
    // interactions, which are not history: read on a little.
    for (let i = 0; i < 4; i++) {
      const r = await listInteractions({ status, limit: PAGE, cursor: next });
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
      this.els.empty.hidden = this.els.list.children.length > 0;
      this.els.list.setAttribute("aria-busy", "false");
    }
    if (this.again) {
      this.again = false;
      this.load(true);
    }
  }
}

function item(it) {
  const res = it.result || {};
  const when = res.responded_at && !res.responded_at.startsWith("0001") ? res.responded_at : it.created_at;
  let outcome;
  if (it.interaction_type === "action" && it.status === "answered" && decisionOf(res.value)) {
    outcome = actionOutcome(it, res, when);
  } else if (it.status === "answered") {
    outcome = [
      h("div", { class: "h-answer" }, h("span", { class: "h-label", text: "Answer" }), valueNode(it, res.value)),
      h("p", { class: "h-meta" },
        res.timed_out ? "Default used at the deadline" : `By ${res.responded_by || "someone"} via ${channelName(res.channel)}`,
        " · ", timeEl(when)),
    ];
  } else {
    const why = it.status === "expired"
      ? "No answer before the deadline"
      : `Cancelled${res.reason && res.reason !== "agent_cancelled" ? `: ${res.reason}` : " by the agent"}`;
    outcome = h("p", { class: "h-meta" }, why, " · ", timeEl(when));
  }
  return h("li", { class: `h-item h-${it.status}`, "data-id": it.interaction_id },
    h("div", { class: "h-head" },
      h("span", { class: `status-badge status-${it.status}`, text: STATUS_LABELS[it.status] || it.status }),
      h("span", { class: `type-badge badge-${it.interaction_type}`, text: TYPE_LABELS[it.interaction_type] || it.interaction_type }),
      it.action?.name ? h("code", { class: "action-chip", text: it.action.name }) : null,
      it.source_agent ? h("span", { class: "h-agent", text: it.source_agent }) : null),
    h("p", { class: "h-question", text: it.question }),
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
function actionOutcome(it, res, when) {
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
    h("p", { class: "h-meta" }, by, " · ", timeEl(when)),
  ];
}
