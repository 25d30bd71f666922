// One card: a pending interaction, its answer widget, its countdown, and
// what happened to it.

import { h, icon, uid } from "./dom.js";
import { contextBlock, detailsBlock, keptBlock, labelCode, nameButtons, typedText } from "./cardparts.js";
import { buildWidget } from "./widgets.js";
import { respond, respondNow } from "./api.js";
import { TYPE_LABELS, countdown, spokenDuration, timeEl } from "./format.js";
import { OUTCOME_KINDS } from "./decision.js";
import { Stakes } from "./stakes.js";
import { Progress, voting } from "./progress.js";
import { copyLinkButton } from "./copylink.js";
import { kindText } from "./ruletext.js";
import { forgetDraft, readDraft, storeDraft, storedDraft, writeDraft } from "./carddraft.js";
import { headline, subline } from "./summary.js";
import { riskBadge, riskNote, risky } from "./risk.js";
import { editedView } from "./editedview.js";
import { forChip, forOthers, projectChip, sessionTag } from "./audience.js";
import { drop, hold, undoWindow } from "./undo.js";

// The AI-Parrot HITL contract's words for a question the agent withdrew (§3.3).
export const MOVED_ON = "The agent moved on — this question expired.";

const isMac = /Mac|iPhone|iPad/.test(navigator.platform || "");

// Card is one interaction on screen. hooks: resolved(card, kind, text),
// announce(text), changed(), show(card) (put it on the page). Far from
// the screen a card may give up its elements (release) and build them
// again (ensure): while it has none, el is null.
export class Card {
  constructor(q, hooks) {
    this.q = q;
    this.id = q.interaction_id;
    this.hooks = hooks;
    this.createdAt = Date.parse(q.created_at) || Date.now();
    this.deadline = Date.parse(q.deadline) || Infinity;
    this.resolved = false;
    this.expired = false;
    this.busy = false;
    this.sent = false;
    this.answerHeard = false; // the live channel said it was answered (hitl:resolved)
    this.warned = false;
    this.build();
    this.restoreDraft();
  }

  build() {
    const q = this.q;
    const ids = { question: uid("q"), context: uid("ctx"), error: uid("err") };
    this.widget = buildWidget(q, ids, (v) => this.submit(v));
    this.timer = h("span", { class: "countdown", role: "timer", "aria-live": "off" }, icon("clock"), h("span", { class: "countdown-text" }));
    this.outcome = h("p", { class: "outcome", hidden: true }, h("span", { class: "outcome-icon" }), h("span", { class: "outcome-text" }));
    this.error = h("div", { class: "card-error", id: ids.error, role: "alert", hidden: true });
    this.stakes = new Stakes(q, this.deadline, () => this.submit(q.default_response));
    this.progress = new Progress(this);
    const kbd = isMac ? "⌘" : "Ctrl";
    this.fields = h("fieldset", { class: "answer-fields" },
      this.widget.body ? h("div", { class: "answer-body" }, this.widget.body) : null,
      this.error,
      h("div", { class: "actions" },
        q.interaction_type === "approval" ? null : h("span", { class: "kbd-hint", "aria-hidden": "true" }, h("kbd", { text: kbd }), " ", h("kbd", { text: "Enter" }), this.widget.hint || " to submit"),
        h("span", { class: "actions-buttons" }, this.widget.actions)));
    this.form = h("form", { class: "answer", novalidate: true, onsubmit: (e) => { e.preventDefault(); this.submit(); } }, this.fields);
    this.form.addEventListener("input", (e) => {
      if (!this.typed && q.interaction_type === "handoff") this.progress.takeOver();
      this.typed = true;
      this.typedIn = e.target;
      this.saveDraft();
    });
    this.form.addEventListener("change", () => this.saveDraft());

    ids.agent = uid("agent");
    const agent = q.source_agent ? h("span", { class: "card-agent", id: ids.agent }, h("span", { class: "sr-only", text: "from " }), q.source_agent) : null;
    const action = q.interaction_type === "action";
    const dot = () => h("span", { class: "dot", "aria-hidden": "true", text: "·" });
    // An action names its tool, and the agent's session when there is one.
    const tool = action && q.action?.name ? h("code", { class: "action-chip card-tool", text: q.action.name }) : null;
    const kind = action && q.action?.kind ? h("span", { class: "card-kind", text: kindText(q.action.kind) }) : null;
    // The project and a coloured tag of the session tell two sessions
    // of one agent apart (the compact row shows them too).
    const only = this.hooks.only;
    const session = sessionTag(q.session_id, only ? () => only("session", q.session_id) : null);
    const project = projectChip(q, only ? (p) => only("project", p) : null);
    const context = q.context ? contextBlock(q.context, ids.context) : null;
    // In the compact list it opens the card in place; beside the right
    // pane it shows the card there (paneMode).
    this.toggle = h("button", { type: "button", class: "btn btn-quiet btn-small card-toggle", "aria-expanded": "false", onclick: () => (this.paned ? this.focus() : this.setOpen(!this.open)) },
      h("span", { class: "sr-only", text: short(headline(q), 60) }), h("span", { class: "card-toggle-text", text: "Expand" }));
    this.article = h("article", {
      class: `card type-${q.interaction_type}${risky(q) ? " is-risky" : ""}`,
      "data-id": this.id,
      "data-type": q.interaction_type,
      tabindex: "-1",
      // The name carries the agent; the description is the context's
      // first paragraph only.
      "aria-labelledby": agent ? `${ids.question} ${ids.agent}` : ids.question,
      "aria-describedby": context ? context.firstId : null,
      onkeydown: (e) => this.onKey(e),
      onclick: (e) => this.onClick(e),
      onpanelopen: () => { if (this.compact() && !this.open) this.setOpen(true); },
    },
    h("header", { class: "card-head" },
      h("span", { class: `type-badge badge-${q.interaction_type}`, text: TYPE_LABELS[q.interaction_type] || q.interaction_type }),
      riskBadge(q),
      tool,
      kind,
      forChip(q),
      h("span", { class: "card-meta" }, agent, project, session, agent || project || session ? dot() : null, timeEl(q.created_at)),
      this.timer,
      this.toggle,
      copyLinkButton(this.id, headline(q))),
    q.interaction_type === "handoff" ? h("p", { class: "handoff-note" }, icon("user"), h("span", { text: "The agent handed this conversation to a person." })) : null,
    h("h2", { class: "question", id: ids.question, text: headline(q) }),
    subline(q) ? h("p", { class: "card-summary" }, h("code", { text: subline(q) })) : null,
    riskNote(q),
    this.stakes.el,
    context?.el || null,
    this.widget.view || null,
    this.progress.el,
    this.outcome,
    this.form,
    detailsBlock(q));
    if (this.widget.view) labelCode(this.widget.view);
    this.nameRegions(this.article);
    nameButtons(this.fields.querySelectorAll(".actions-buttons button"), subline(q) || headline(q), q.interaction_type);
    // The wrapper collapses smoothly when the card leaves.
    this.el = h("div", { class: "card-wrap", "data-id": this.id }, h("div", { class: "card-clip" }, this.article));
    if (this.paned) this.paneMode(true);
    this.progress.render();
    this.tick(Date.now());
  }

  onKey(e) {
    // Enter on the card itself opens or closes it in the compact list.
    if (e.key === "Enter" && e.target === this.article && !e.ctrlKey && !e.metaKey && !e.altKey && !e.shiftKey) {
      if (this.compact()) {
        e.preventDefault();
        this.setOpen(!this.open);
      }
      return;
    }
    if (e.key !== "Enter" || !(e.ctrlKey || e.metaKey) || e.altKey || e.shiftKey) return;
    e.preventDefault();
    e.stopPropagation();
    if (this.widget.key?.(e.target)) return;
    const v = this.widget.keyValue(e.target);
    this.submit(v);
  }

  // compact reports whether the card is in the compact list.
  compact() {
    return !!this.article.closest(".is-compact");
  }

  // onClick opens a closed card of the compact list clicked anywhere but
  // on a control.
  onClick(e) {
    if (!this.compact() || this.open || e.target.closest("button, a, input, textarea, select, label, summary, pre")) return;
    this.setOpen(true);
  }

  // setOpen opens (shows whole) or closes a card of the compact list.
  setOpen(open) {
    this.open = open;
    this.article.classList.toggle("is-open", open);
    this.toggle.setAttribute("aria-expanded", open ? "true" : "false");
    this.toggle.querySelector(".card-toggle-text").textContent = open ? "Collapse" : "Expand";
  }

  // paneMode says whether the card's row stands beside the right pane,
  // where its toggle shows the card (Show) rather than opening it in place.
  paneMode(on) {
    this.paned = on;
    if (!this.toggle) return;
    if (on && this.open) this.setOpen(false);
    if (on) this.toggle.removeAttribute("aria-expanded");
    else this.toggle.setAttribute("aria-expanded", this.open ? "true" : "false");
    this.toggle.querySelector(".card-toggle-text").textContent = on ? "Show" : this.open ? "Collapse" : "Expand";
  }

  // soon reports whether the card's question is open and expires within
  // five minutes (it is pinned on top).
  soon(now = Date.now()) {
    return !this.resolved && !this.expired && this.deadline - now < 5 * 60000;
  }

  // outcomeText is what became of the card, in words.
  outcomeText() {
    return this.outcome.querySelector(".outcome-text").textContent;
  }

  // focus moves keyboard focus to the card itself, putting it on the page
  // first when it was far from the screen.
  focus() {
    this.hooks.show?.(this);
    this.article.focus({ preventScroll: true });
    // In the right pane, its row in the list comes into view.
    (this.inPane ? this.el : this.article).scrollIntoView({ block: "nearest", behavior: matchMedia("(prefers-reduced-motion: reduce)").matches ? "auto" : "smooth" });
  }

  // submit answers with value, or with what the widget holds.
  submit(value) {
    if (this.resolved || this.expired || this.busy) return;
    this.clearError();
    if (value === undefined) {
      const r = this.widget.read();
      if (!r.ok) {
        this.showError(r.message);
        r.first?.focus();
        return;
      }
      value = r.value;
    }
    this.value = value;
    if (undoWindow() > 0) this.hold();
    else this.send();
  }

  // hold keeps the decision for the undo window before it is sent (the
  // agent is told nothing meanwhile); the focus moves on at once.
  hold() {
    const text = this.widget.sentText ? this.widget.sentText(this.value) : "Answer ready.";
    this.held = true;
    this.fields.disabled = true;
    this.showOutcome("held", `${text} Sending in a moment — press u to undo.`);
    this.hooks.answered?.(this);
    hold(this, `${short(headline(this.q), 60)}: ${text}`, () => {
      this.held = false;
      if (this.resolved) return;
      this.outcome.hidden = true;
      this.send();
    }, () => respondNow(this.id, this.q.interaction_type, this.value));
  }

  // unhold takes the held decision back: nothing was sent, the card
  // can be answered again, and it has the focus.
  unhold() {
    this.held = false;
    this.outcome.hidden = true;
    this.fields.disabled = this.busy || this.resolved || this.expired || !!this.votedLock || !!this.claimLocked;
    this.focus();
    this.hooks.announce(`Undone: “${short(headline(this.q), 80)}” was not sent.`);
  }

  async send() {
    this.clearError();
    this.setBusy(true, "Sending…");
    const res = await respond(this.id, this.q.interaction_type, this.value, (n) => this.setBusy(true, `Retrying (${n})…`));
    this.setBusy(false);
    if (this.resolved) return;
    if (res.ok && voting(this.q)) {
      // A vote: the question stays until the others have voted; the
      // live channel's hitl:progress shows it counted.
      this.lockVoted();
      // Unless it ended while the vote was on its way (a veto, or this
      // very vote completed it): the card ends with that news.
      if (this.deferred) {
        this.endDeferred();
        return;
      }
      this.hooks.announce("Your vote is counted; waiting for the others.");
      return;
    }
    if (res.ok) {
      this.unsent = false;
      this.hooks.answered?.(this);
      this.sent = true;
      this.resolve("sent", this.widget.sentText ? this.widget.sentText(this.value) : "Answer sent.", this.q.interaction_type === "action" ? lookOf(this.value) : "");
      return;
    }
    if (this.deferred) {
      // Answered elsewhere while this answer was in flight.
      this.endDeferred();
      return;
    }
    switch (over(res) || res.status) {
      case "conflict":
        this.conflict = true;
        this.resolve("answered", "Someone else answered first.");
        if (!this.explained) this.hooks.lookup?.(this);
        return;
      case "cancelled":
        this.resolve("cancelled", MOVED_ON);
        return;
      case "expired":
        this.resolve("expired", "Too late — this question expired before your answer arrived.");
        return;
      case "not_found":
        this.resolve("gone", "This question no longer exists.");
        return;
      case 422: {
        const list = this.widget.parse ? this.widget.parse(res.message) : [];
        const rest = list.length > 0 ? this.widget.showErrors(list) : [res.message];
        this.showError(rest.length > 0 ? rest.join(" ") : "Some fields need attention.");
        return;
      }
      case 0:
        // Kept: it is sent again once the live channel is back.
        this.unsent = true;
        this.showError("Your answer could not be sent: the server is unreachable. It is sent again when the connection is back.", true);
        return;
      default:
        this.showError(`Your answer could not be sent: ${res.message || "server error"}.`, res.status >= 500);
    }
  }

  // lockVoted keeps a person who voted from voting again: the answer
  // fields are disabled for good.
  lockVoted() {
    this.votedLock = true;
    this.fields.disabled = true;
  }

  // setClaimLock disables the answer while someone else holds an
  // exclusive claim, saying why.
  setClaimLock(locked, why) {
    this.claimLocked = locked;
    this.fields.disabled = locked || this.votedLock || this.busy || this.resolved || this.expired;
    // The claim line above says who is on it: not said twice.
    this.lockReason = locked ? why : "";
    if (!locked && this.error.dataset.claim) {
      this.clearError();
      this.error.dataset.claim = "";
    }
  }

  // answeredElsewhere ends the card because another tab or channel
  // answered; while this card's own answer is in flight it waits for the
  // server's verdict (the news may be about that very answer).
  answeredElsewhere(text) {
    if (this.busy) {
      this.deferred = { text, look: "" };
      return;
    }
    this.resolve("answered", text);
  }

  // endDeferred ends the card with the news answeredElsewhere held, and
  // the details update added to it.
  endDeferred() {
    const { text, look } = this.deferred;
    this.deferred = null;
    this.resolve("answered", text, look);
  }

  setBusy(busy, label) {
    this.busy = busy;
    this.article.setAttribute("aria-busy", busy ? "true" : "false");
    if (busy && this.article.contains(document.activeElement) && document.activeElement !== this.article) {
      this.refocus = document.activeElement;
      this.article.focus({ preventScroll: true });
    }
    this.fields.disabled = busy || this.resolved || this.expired || this.votedLock || this.claimLocked;
    const primary = this.fields.querySelector(".btn-primary span");
    if (primary) {
      this.primaryLabel ??= primary.textContent;
      primary.textContent = busy && label && !["approval", "action"].includes(this.q.interaction_type) ? label : this.primaryLabel;
    }
    if (!busy && this.refocus && !this.resolved && document.activeElement === this.article) {
      this.refocus.focus();
      this.refocus = null;
    }
  }

  showError(message, retry = false) {
    this.error.replaceChildren(h("span", { class: "card-error-text", text: message }));
    if (retry) {
      this.error.append(h("button", { type: "button", class: "btn btn-secondary btn-small btn-retry", onclick: () => this.send() }, icon("retry"), h("span", { text: "Retry" })));
    }
    this.error.hidden = false;
  }

  clearError() {
    this.error.hidden = true;
    this.error.replaceChildren();
  }

  // tick updates the countdown; at the deadline the card is disabled (the
  // server then sends hitl:cancel, or hitl:resolved with the default).
  tick(now) {
    if (this.resolved) return;
    // A card off the page comes back when it is about to be pinned on top.
    if (!this.el) {
      if (this.deadline - now >= 5 * 60000) return;
      this.ensure();
    }
    this.progress?.tick();
    const left = this.deadline - now;
    const text = this.timer.querySelector(".countdown-text");
    if (!Number.isFinite(left)) {
      this.timer.hidden = true;
      return;
    }
    if (left <= 0) {
      if (!this.expired) this.expire();
      return;
    }
    text.textContent = countdown(left);
    this.stakes.tick(now);
    const soon = left < 5 * 60000;
    if (soon && !this.article.classList.contains("is-soon")) this.hooks.soon?.(this);
    this.article.classList.toggle("is-soon", soon);
    this.timer.classList.toggle("is-soon", left < 5 * 60000);
    this.timer.classList.toggle("is-urgent", left < 60000);
    // One calm announcement when a minute is left, never every second;
    // a short deadline (90 s or less) is spoken at half-time.
    const span = this.deadline - this.createdAt;
    const warnAt = span > 90000 ? 60000 : span / 2;
    if (left <= warnAt && !this.warned) {
      this.warned = true;
      this.hooks.announce(`“${short(headline(this.q))}” expires in ${spokenDuration(left)}.`);
    }
  }

  expire() {
    this.expired = true;
    this.article.classList.add("is-expired");
    this.timer.querySelector(".countdown-text").textContent = "Time is up";
    this.fields.disabled = true;
    this.stakes.el.hidden = true;
    this.keepTyped();
    this.showOutcome("expired", this.stakes.expiredText());
    this.hooks.changed();
  }

  // showOutcome shows what became of the card; look, when given, is the
  // decision's look (approved, edited, rejected, responded), else kind's.
  showOutcome(kind, text, look = "") {
    const l = look || kind;
    this.outcome.className = `outcome outcome-${l}`;
    this.outcome.querySelector(".outcome-icon").replaceChildren(icon(OUTCOME_ICONS[l] || "x"));
    this.outcome.querySelector(".outcome-text").textContent = text;
    this.outcome.hidden = false;
  }

  // resolve ends the card with an outcome; it returns false when the card
  // had already ended. An answered action then asks the server what was
  // decided, by whom and through which channel.
  resolve(kind, text, look = "") {
    if (this.resolved) return false;
    this.resolved = true;
    // A decision held for undo is not sent once the question ended.
    if (this.held) {
      drop(this);
      this.held = false;
    }
    if (kind !== "sent") this.keepTyped();
    else this.kept?.remove();
    // The focus moves on to the next card, as after an answer, rather
    // than falling to the page with the fields about to be disabled.
    if (kind !== "sent" && this.hasFocus()) {
      this.hooks.answered?.(this);
      if (this.hasFocus()) this.article.focus({ preventScroll: true });
    }
    this.clearError();
    this.fields.disabled = true;
    this.timer.hidden = true;
    this.stakes.el.hidden = true;
    this.article.classList.add("is-resolved", `is-${kind}`);
    this.article.setAttribute("aria-busy", "false");
    this.showOutcome(kind, text, look);
    this.progress.render();
    this.clearDraft();
    this.hooks.resolved(this, kind, text);
    if (this.q.interaction_type === "action" && (kind === "sent" || kind === "answered")) {
      this.explained = true;
      this.hooks.lookup?.(this);
    }
    return true;
  }

  // showEdited shows an action approved with edited arguments: what ran
  // and what changed, in place of the proposed call.
  showEdited(args) {
    if (!this.widget?.view || !args) return;
    const v = editedView(this.q.action, args);
    this.widget.view.replaceWith(v);
    this.widget.view = v;
    this.nameRegions(v);
  }

  // nameRegions gives the code regions under root names of their own
  // ("Command: git status"): every card's "Command" would be alike.
  nameRegions(root) {
    const title = short(headline(this.q), 60);
    for (const r of root.querySelectorAll('[role="region"][aria-label]')) {
      if (r.dataset.named || !["Command", "Code"].includes(r.getAttribute("aria-label"))) continue;
      r.dataset.named = "1";
      r.setAttribute("aria-label", `${r.getAttribute("aria-label")}: ${title}`);
    }
  }

  // keepTyped keeps what the person was typing when the card ended,
  // read-only with Copy, until dismissed.
  keepTyped() {
    if (this.kept || this.sent || !this.typed) return;
    // What was typed last, in whichever field: a reject reason, not the
    // untouched arguments beside it.
    const last = this.typedIn;
    const text = last && this.form.contains(last) && typeof last.value === "string" && last.value.trim() ? last.value : typedText(this.form);
    if (!text) return;
    this.keptText = true;
    this.kept = keptBlock(text, (t) => this.hooks.announce(t), () => this.hooks.dismiss?.(this));
    this.form.after(this.kept);
  }

  // update replaces the outcome text of an ended card (details arrived),
  // and its look when one is given.
  update(text, look = "") {
    // Details of news held while this card's own answer is in flight are
    // what the card ends with.
    if (this.deferred && !this.resolved) this.deferred = { text, look: look || this.deferred.look };
    if (look) this.showOutcome("", text, look);
    else this.outcome.querySelector(".outcome-text").textContent = text;
  }

  // leave animates the card out and removes it.
  leave() {
    if (this.leaving) return;
    this.leaving = true;
    const done = () => {
      if (this.gone) return;
      this.gone = true;
      this.el.remove();
      this.hooks.removed?.(this);
    };
    if (matchMedia("(prefers-reduced-motion: reduce)").matches) {
      done();
      return;
    }
    this.el.classList.add("is-leaving");
    this.el.addEventListener("transitionend", (e) => { if (e.target === this.el) done(); });
    setTimeout(done, 700); // in case no transition runs
  }

  saveDraft() {
    this.draft = readDraft(this.form);
    storeDraft(this.id, this.draft);
  }

  restoreDraft() {
    writeDraft(this.form, this.draft || storedDraft(this.id));
  }

  clearDraft() {
    this.draft = null;
    forgetDraft(this.id);
  }

  // hasFocus reports whether the focus is in the card.
  hasFocus() {
    const a = document.activeElement;
    return !!(this.el?.contains(a) || this.article?.contains(a));
  }

  // holds reports whether the card holds something a person would lose
  // if it left the page: the focus, an answer being sent or kept to send,
  // an outcome, an error, a vote or a claim, a reminder.
  holds() {
    if (!this.el) return false;
    return this.resolved || this.expired || this.busy || this.unsent || this.votedLock || this.claimLocked ||
      this.leaving || this.inPane || !this.error.hidden || !this.progress.escalation.hidden || this.hasFocus();
  }

  // release gives up the card's elements while it is far from the screen
  // (the inbox keeps thousands of cards, the page only those near the
  // screen); its draft stays in the model. It reports whether it did.
  release() {
    if (!this.el || this.holds()) return false;
    this.draft = readDraft(this.form);
    this.el.remove();
    for (const k of BUILT) this[k] = null;
    return true;
  }

  // ensure builds a released card again, with its draft and its compact
  // list state.
  ensure() {
    if (this.el) return;
    this.build();
    this.restoreDraft();
    if (this.open) this.setOpen(true);
    this.el.classList.add("is-back");
  }
}

// BUILT are the fields build sets, which release drops.
const BUILT = ["widget", "timer", "outcome", "error", "stakes", "progress", "fields", "form", "toggle", "article", "el", "primaryLabel", "refocus"];

// over says why an answer was refused when the question is over:
// "conflict" (answered already), "expired", "cancelled" or "not_found";
// "" when it was refused for another reason. The AI-Parrot HITL
// contract's respond route answers 404 for all four, with the reason as
// the error's code; the native route answers 409, 410 or 404.
function over(res) {
  if (![404, 409, 410].includes(res.status)) return "";
  if (["conflict", "expired", "cancelled", "not_found"].includes(res.code)) return res.code;
  return { 404: "not_found", 409: "conflict", 410: "expired" }[res.status];
}

// OUTCOME_ICONS are the icons of the outcomes.
const OUTCOME_ICONS = {
  sent: "check", answered: "check", approved: "check", expired: "clock", held: "clock",
  edited: "edit", rejected: "x", responded: "reply",
};

// lookOf is the look of an action's own answer (see showOutcome); "" for
// the other types.
function lookOf(value) {
  return OUTCOME_KINDS[value?.decision] || "";
}

// short trims a question for announcements and notifications.
export function short(s, n = 120) {
  const t = String(s).replace(/\s+/g, " ").trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
}
