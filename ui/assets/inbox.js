// The inbox: every pending interaction as a card, newest on top, kept in
// step with the live channel.

import { isTyping } from "./dom.js";
import { Card, MOVED_ON, short } from "./card.js";
import { getInteraction } from "./api.js";
import { answeredBy, ago, channelName } from "./format.js";
import { actionOutcome } from "./decision.js";
import { notify, dismiss } from "./notify.js";

const DEFAULT_USED = "The deadline passed, so the default answer was used.";
// How long an ended card stays to show what happened, in ms.
const LINGER_SENT = 2500;
const LINGER_OTHER = 5000;
// How long a link's pending card may take to arrive in the replay, and how
// long it stays highlighted, in ms.
const LINK_WAIT = 3000;
const HIGHLIGHT = 2000;

export class Inbox {
  // els: {cards, empty, sub, count, heading, notice}; opts: {announce,
  // visible(), changed(pending)}
  constructor(els, opts) {
    this.els = els;
    this.opts = opts;
    this.cards = new Map();
    this.fresh = [];
    this.burst = null;
    this.ready = false;
    this.ticks = 0;
    this.gen = 0; // bumped by reset(): a notice fetched before signing out is dropped
    this.wanted = null; // the id a link named, until its card arrives
    this.linked = null; // the card a link opened, which keeps the focus
    setInterval(() => this.tick(), 1000);
    this.render();
  }

  // handle applies one live message.
  handle(msg) {
    switch (msg.type) {
      case "hitl:question":
        if (msg.interaction_id) this.add(msg);
        break;
      case "hitl:cancel": {
        // Every question that ends gets one, an answered one after
        // hitl:resolved: that card keeps its outcome (its own answer may
        // still be in flight, and be the one that won).
        const card = this.cards.get(msg.interaction_id);
        if (card && !card.answerHeard) card.resolve("cancelled", MOVED_ON);
        break;
      }
      case "hitl:resolved": {
        const card = this.cards.get(msg.interaction_id);
        if (!card) break;
        card.answerHeard = true;
        if (card.sent) break;
        card.answeredElsewhere(msg.timed_out ? DEFAULT_USED : answeredBy(msg.responded_by, msg.channel));
        break;
      }
      case "hitl:progress": {
        // A vote was cast, or a claim made or released.
        const card = this.cards.get(msg.interaction_id);
        if (card && !card.resolved) card.progress.apply(msg);
        break;
      }
      case "hitl:replay_done":
        this.replayDone(msg);
        break;
    }
  }

  // replayDone runs when a connection's replay is complete: every card
  // that is still pending is on the page. After a full replay, a card
  // whose question is not among the pending ones ended while the page was
  // not listening; after a resume the page was sent what it missed.
  replayDone(msg) {
    this.setReady();
    if (!msg.resumed && Array.isArray(msg.pending)) this.reconcile(new Set(msg.pending));
  }

  add(q) {
    if (this.cards.has(q.interaction_id)) return; // a replay of a card on screen
    const card = new Card(q, {
      resolved: (c, kind, text) => this.onResolved(c, kind, text),
      announce: (text) => this.opts.announce(text),
      changed: () => this.render(),
      lookup: (c) => this.lookup(c),
    });
    this.cards.set(card.id, card);
    // Newest on top: before the first card created no later (the replay
    // comes oldest first, so of two cards created in the same millisecond
    // the one that arrives second is the newer).
    const after = [...this.els.cards.children].find((el) => {
      const other = this.cards.get(el.dataset.id);
      return other && other !== card && other.createdAt <= card.createdAt;
    });
    this.els.cards.insertBefore(card.el, after || null);
    if (card.id === this.wanted) {
      this.wanted = null;
      clearTimeout(this.wantTimer);
      this.spotlight(card);
    }
    this.fresh.push(card);
    clearTimeout(this.burst);
    this.burst = setTimeout(() => this.welcome(), 150);
    this.render();
  }

  // welcome tells the person about the cards that just arrived: one
  // announcement, one notification each, and focus to the newest unless
  // they are busy with something else.
  welcome() {
    const fresh = this.fresh.filter((c) => !c.resolved);
    this.fresh = [];
    if (fresh.length === 0) return;
    // In page order, so the newest is the topmost (ties in created_at are
    // broken by arrival, as add() placed them).
    fresh.sort((a, b) => (a.el.compareDocumentPosition(b.el) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1));
    const newest = fresh[0];
    const from = newest.q.source_agent ? ` from ${newest.q.source_agent}` : "";
    this.opts.announce(fresh.length === 1
      ? `New question${from}: ${short(newest.q.question)}`
      : `${fresh.length} new questions. Newest${from}: ${short(newest.q.question)}`);
    for (const c of fresh.slice().reverse()) {
      notify(c.q, short(c.q.question, 200), () => {
        this.opts.show();
        c.focus();
      });
    }
    // A card a link opened keeps the focus.
    const linked = fresh.includes(this.linked);
    this.linked = null;
    if (!linked && this.opts.visible() && !busyElsewhere()) newest.focus();
  }

  // open follows a link to interaction id (Slack's "Open in hitl"), once
  // the replay has run; pending is the set of pending ids (null when it
  // could not be read). A pending card is brought into view, focused and
  // highlighted; otherwise a notice says what became of the question.
  open(id, pending) {
    const card = this.cards.get(id);
    if (card && !card.resolved && !card.expired) {
      this.spotlight(card);
      return;
    }
    if (!card && pending?.has(id)) {
      // Pending but not here yet: the replay is still arriving.
      this.wanted = id;
      clearTimeout(this.wantTimer);
      this.wantTimer = setTimeout(() => {
        if (this.wanted !== id) return;
        this.wanted = null;
        this.explain(id);
      }, LINK_WAIT);
      return;
    }
    this.explain(id);
  }

  // spotlight focuses card and highlights it for a moment.
  spotlight(card) {
    this.linked = card;
    card.focus();
    card.article.classList.add("is-linked");
    setTimeout(() => card.article.classList.remove("is-linked"), HIGHLIGHT);
  }

  // explain fetches interaction id and shows in a notice what became of
  // it.
  async explain(id) {
    const gen = this.gen;
    const r = await getInteraction(id);
    if (gen !== this.gen) return; // signed out meanwhile
    let text;
    if (!r.ok) {
      text = r.status === 404 ? "That question was not found." : "That question could not be loaded.";
    } else {
      const it = r.data;
      const res = it.result || {};
      switch (it.status) {
        case "answered":
          text = res.timed_out
            ? "That question reached its deadline, so the default answer was used."
            : `That question was answered by ${res.responded_by || "someone"} via ${channelName(res.channel)}.`;
          break;
        case "expired":
          text = "That question expired.";
          break;
        case "cancelled":
          text = "That question was cancelled.";
          break;
        default:
          text = this.cards.get(id)?.expired ? "That question expired." : "That question is not in your inbox.";
      }
    }
    this.els.notice.textContent = text;
  }

  onResolved(card, kind, text) {
    dismiss(card.id);
    this.opts.announce(kind === "sent" ? text : `“${short(card.q.question, 80)}”: ${text}`);
    // What became of an action is worth reading: it stays longer.
    setTimeout(() => this.remove(card), kind === "sent" && card.q.interaction_type !== "action" ? LINGER_SENT : LINGER_OTHER);
    this.opts.resolved?.();
    this.render();
  }

  remove(card) {
    if (!this.cards.has(card.id)) return;
    const hadFocus = card.el.contains(document.activeElement);
    const order = [...this.els.cards.children].map((el) => this.cards.get(el.dataset.id))
      .filter((c) => c && (c === card || !c.resolved));
    const i = order.indexOf(card);
    const next = order[i + 1] || order[i - 1];
    this.cards.delete(card.id);
    card.leave();
    if (hadFocus) {
      if (next && next !== card) next.focus();
      else this.els.heading.focus();
    }
    this.render();
  }

  // lookup fills in who answered a card that a POST found already
  // answered, and what was decided about an action.
  async lookup(card) {
    const r = await getInteraction(card.id);
    if (!r.ok || r.data.status !== "answered") return;
    const res = r.data.result || {};
    const first = card.conflict ? "Someone else answered first. " : "";
    const o = card.q.interaction_type === "action" ? actionOutcome(r.data) : null;
    // This page's own "Always allow…" made a rule with the answer.
    const rule = card.sent && card.value?.always ? " The rule is saved: see Rules in the top bar." : "";
    if (o) card.update(`${first}${o.text}${rule}`, o.kind);
    else if (card.conflict) card.update(res.timed_out ? DEFAULT_USED : `${first}${answeredBy(res.responded_by, res.channel)}`);
  }

  // setReady marks the first replay as complete enough to show the empty
  // state.
  setReady() {
    this.ready = true;
    this.render();
  }

  // reset empties the inbox at once, without outcomes or announcements
  // (signing out). Drafts stay in the tab's session storage, so an answer
  // being typed when a session ended is still there after signing in.
  reset() {
    clearTimeout(this.burst);
    clearTimeout(this.wantTimer);
    this.gen += 1;
    this.wanted = null;
    this.linked = null;
    this.els.notice.textContent = "";
    this.fresh = [];
    for (const card of this.cards.values()) {
      dismiss(card.id);
      card.el.remove();
    }
    this.cards.clear();
    this.els.cards.replaceChildren();
    this.ready = false;
    this.render();
  }

  // reconcile drops the cards that are not in pending (the ids a full
  // replay listed): their questions ended while the page was not
  // listening, so what became of each is fetched and shown.
  async reconcile(pending) {
    for (const card of [...this.cards.values()]) {
      if (card.resolved || pending.has(card.id)) continue;
      const r = await getInteraction(card.id);
      if (card.resolved) continue;
      if (!r.ok) {
        if (r.status === 404) card.resolve("gone", "This question no longer exists.");
        continue;
      }
      const it = r.data;
      const res = it.result || {};
      if (it.status === "answered") card.answeredElsewhere(res.timed_out ? DEFAULT_USED : answeredBy(res.responded_by, res.channel));
      else if (it.status === "cancelled" || it.status === "expired") card.resolve("cancelled", MOVED_ON);
    }
  }

  tick() {
    const now = Date.now();
    for (const c of this.cards.values()) c.tick(now);
    if (++this.ticks % 30 === 0) {
      for (const t of this.els.cards.querySelectorAll("time[datetime]")) {
        t.textContent = ago(new Date(t.getAttribute("datetime")), now);
      }
    }
  }

  // pending counts the cards that can still be answered.
  pending() {
    let n = 0;
    for (const c of this.cards.values()) if (!c.resolved && !c.expired) n++;
    return n;
  }

  render() {
    const n = this.pending();
    const { empty, sub, count } = this.els;
    count.textContent = String(n);
    count.hidden = n === 0;
    empty.hidden = !this.ready || this.cards.size > 0;
    if (!this.ready && this.cards.size === 0) sub.textContent = "Loading questions…";
    else if (n === 0) sub.textContent = "You're all caught up.";
    else sub.textContent = n === 1 ? "1 question is waiting for you." : `${n} questions are waiting for you.`;
    this.opts.changed(n);
  }
}

// busyElsewhere reports whether the person is typing, working in a card or
// in a dialog, in which case a new card must not take the focus.
function busyElsewhere() {
  const a = document.activeElement;
  if (isTyping(a) || a?.closest?.("dialog")) return true;
  const card = a?.closest?.(".card");
  return !!card && a !== card && !card.classList.contains("is-resolved");
}
