// The inbox: the pending interactions as cards, in the triage bar's order
// (deadline soonest or newest, those expiring within five minutes pinned
// on top) and filters, kept in step with the live channel. Only the pages
// of questions scrolled to are loaded: the first with the live replay,
// the next ones from the list API as the end of the list comes near; of
// those, only the cards near the screen are on the page (inboxwindow.js).

import { isTyping } from "./dom.js";
import { Card, short } from "./card.js";
import { answeredBy, ago } from "./format.js";
import { notify, dismiss } from "./notify.js";
import { endText } from "./cardoutcome.js";
import { lookup, reconcile, tellValue } from "./inboxfates.js";
import { EndedStrip } from "./ended.js";
import { Pages } from "./inboxpages.js";
import { fateText } from "./fate.js";
import { NewPill } from "./newpill.js";
import { CardWindow } from "./inboxwindow.js";
import { headline } from "./summary.js";
import { forOthers } from "./audience.js";
import { TwoPane } from "./twopane.js";

// How long an ended card stays to show what happened, in ms.
const LINGER_SENT = 2500;
const LINGER_OTHER = 5000;
// How long a link's pending card may take to arrive in the replay, and how
// long it stays highlighted, in ms.
const LINK_WAIT = 3000;
const HIGHLIGHT = 2000;

// handoffCard is a hitl:handoff as the card of an interaction: the agent's
// message is its question, and it has no options, form or default.
export function handoffCard(msg) {
  const { message, ...rest } = msg;
  return { ...rest, question: message, options: [], form_schema: null, default_response: null };
}

export class Inbox {
  // els: {cards, empty, sub, count, heading, notice, more, pill, ended,
  // panes, pane, paneEmpty};
  // opts: {announce, visible(), show(), resolved(), changed(pending),
  // triage (the Triage bar)}
  constructor(els, opts) {
    this.els = els;
    this.opts = opts;
    this.triage = opts.triage;
    this.cards = new Map();
    this.order = []; // the cards in view, in the triage bar's order
    this.fresh = [];
    this.burst = null;
    this.ready = false;
    this.summarized = false; // the summary on load was spoken
    this.ticks = 0;
    this.gen = 0; // bumped by reset(): a notice fetched before signing out is dropped
    this.wanted = null; // the id a link named, until its card arrives
    this.linked = null; // the card a link opened, which keeps the focus
    this.pages = new Pages(this);
    this.win = new CardWindow(this);
    this.ended = new EndedStrip(els.ended);
    this.pill = new NewPill(els.pill, els.cards, (seen) => {
      (this.order.find((c) => seen.includes(c)) || this.order[0])?.focus();
    }, (c) => this.win.above(c));
    this.panes = new TwoPane(this, { panes: els.panes, pane: els.pane, empty: els.paneEmpty }, () => this.triage.view.panes);
    setInterval(() => this.tick(), 1000);
    this.showCompact();
    this.render();
  }

  // handle applies one live message.
  handle(msg) {
    switch (msg.type) {
      case "hitl:question":
        if (msg.interaction_id) this.add(msg);
        this.pages.countsChanged();
        break;
      case "hitl:handoff":
        // An agent gave its conversation to a person: a card with a reply
        // box, whose question is the agent's message.
        if (msg.interaction_id) this.add(handoffCard(msg));
        this.pages.countsChanged();
        break;
      case "hitl:cancel": {
        // Every question that ends gets one, an answered one after
        // hitl:resolved: that card keeps its outcome (its own answer may
        // still be in flight, and be the one that won).
        const card = this.cards.get(msg.interaction_id);
        card?.ensure();
        if (card && !card.answerHeard) card.resolve("cancelled", endText(card, msg.reason));
        this.pages.countsChanged();
        break;
      }
      case "hitl:resolved": {
        const card = this.cards.get(msg.interaction_id);
        if (!card) break;
        card.ensure();
        card.answerHeard = true;
        if (card.sent) break;
        card.answeredElsewhere(msg.timed_out ? card.stakes.expiredText(true) : answeredBy(msg.responded_by, msg.channel));
        if (!msg.timed_out) tellValue(card);
        break;
      }
      case "hitl:progress": {
        // A vote was cast, or a claim made or released.
        const card = this.cards.get(msg.interaction_id);
        if (!card || card.resolved) break;
        card.ensure();
        card.progress.apply(msg);
        break;
      }
      case "hitl:replay_done":
        this.replayDone(msg);
        break;
    }
  }

  // replayDone runs when a connection's replay is complete: every card
  // that is still pending is on the page (the first page of them, with
  // ?replay=page). After a full replay, a card whose question is not
  // among the pending ones ended while the page was not listening; after
  // a resume the page was sent what it missed.
  replayDone(msg) {
    if (msg.paged) this.pages.replayed(msg);
    this.setReady();
    if (!msg.resumed && Array.isArray(msg.pending)) reconcile([...this.cards.values()], new Set(msg.pending));
    if (!this.summarized) {
      this.summarized = true;
      this.summary(msg.counts);
    }
  }

  // summary speaks one sentence on load ("23 waiting; 4 expire within 5
  // minutes") instead of one announcement per card, and puts the focus
  // on the topmost card unless the person is busy.
  summary(counts) {
    clearTimeout(this.burst);
    const fresh = this.fresh.filter((c) => !c.resolved);
    this.fresh = [];
    for (const c of fresh) notify(c.q, short(headline(c.q), 200), () => this.openCard(c));
    const n = counts ? counts.total : this.pending();
    if (n === 0) return;
    const soon = counts ? counts.expiring_within_5m : [...this.cards.values()].filter((c) => c.soon()).length;
    this.opts.announce(`${n} waiting${soon ? `; ${soon} expire${soon === 1 ? "s" : ""} within 5 minutes` : ""}.`);
    const top = this.visibleCards()[0];
    if (top && !this.linked && this.opts.visible() && !busyElsewhere()) top.focus();
  }

  // add puts question q on the page; quiet (a page fetched on demand)
  // neither announces nor notifies it.
  add(q, quiet = false) {
    if (this.cards.has(q.interaction_id)) return; // a replay of a card on screen
    const card = new Card(q, {
      resolved: (c, kind, text) => this.onResolved(c, kind, text),
      announce: (text) => this.opts.announce(text),
      changed: () => this.render(),
      lookup: (c) => lookup(c),
      answered: (c) => this.focusAfter(c),
      soon: (c) => this.place(c),
      unsent: () => this.opts.unsent?.(),
      dismiss: (c) => this.dismissCard(c),
      only: (field, value) => this.triage.only(field, value),
      show: (c) => {
        this.win.layout(c);
        this.panes.select(c);
      },
    });
    this.cards.set(card.id, card);
    if (this.panes.on) card.paneMode(true);
    if (quiet) {
      this.place(card);
    } else {
      const anchor = this.pill.anchor();
      this.place(card);
      this.win.layout();
      this.pill.keep(anchor);
    }
    if (card.id === this.wanted) {
      this.wanted = null;
      clearTimeout(this.wantTimer);
      this.spotlight(card);
    }
    if (!quiet) {
      this.fresh.push(card);
      clearTimeout(this.burst);
      if (this.summarized) this.burst = setTimeout(() => this.welcome(), 150);
    }
    this.render();
  }

  // place puts card where the order says, or out of the order when the
  // filters leave it out. Questions expiring within five minutes are
  // pinned on top, soonest first.
  place(card) {
    if (card.gone) return;
    const i = this.order.indexOf(card);
    if (i >= 0) this.order.splice(i, 1);
    if (this.triage.matches(card.q) || card.resolved) this.order.splice(this.slot(card), 0, card);
    this.win.schedule();
  }

  // slot is where card goes in the order: before the first card it goes
  // above.
  slot(card) {
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.before(card, this.order[mid])) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  // before reports whether card a goes above card b.
  before(a, b) {
    // The reviewer's own questions come before those meant for others.
    const oa = forOthers(a.q) ? 1 : 0;
    const ob = forOthers(b.q) ? 1 : 0;
    if (oa !== ob) return oa < ob;
    const pa = a.soon() ? 1 : 0;
    const pb = b.soon() ? 1 : 0;
    if (pa !== pb) return pa > pb;
    if (pa || this.triage.view.sort === "deadline") {
      if (a.deadline !== b.deadline) return a.deadline < b.deadline;
      return a.id < b.id;
    }
    // Newest on top (the replay comes oldest first, so of two cards
    // created in the same millisecond the one that arrives second is
    // the newer).
    return a.createdAt >= b.createdAt;
  }

  // arrange applies a new order or filter to the cards; the ended ones
  // keep their places.
  arrange() {
    const anchor = this.pill.anchor();
    const ended = this.order.map((c, i) => [c, i]).filter(([c]) => c.resolved);
    this.order = [];
    for (const card of this.cards.values()) if (!card.resolved) this.place(card);
    for (const [c, i] of ended) this.order.splice(Math.min(i, this.order.length), 0, c);
    this.win.layout();
    this.pill.keep(anchor);
    if (this.panes.card && !this.order.includes(this.panes.card)) this.panes.putBack();
    this.render();
  }

  // viewChanged runs when the triage bar changed: the compact mode, or
  // the order and filters (then the first page of what matches is
  // fetched).
  viewChanged(view, what) {
    if (what === "compact" || what === "panes") {
      this.showCompact();
      return;
    }
    this.arrange();
    this.pages.restart();
  }

  // showCompact lays the list out as the compact mode and the two panes
  // say: the list beside the right pane is always compact.
  showCompact() {
    this.panes?.apply();
    this.els.cards.classList.toggle("is-compact", !!this.triage.view.compact || !!this.panes?.on);
    this.win?.remeasure();
  }

  // visibleCards are the cards in view, on the page or near it, in order.
  visibleCards() {
    return this.order;
  }

  // move focuses the next (by 1) or previous (by -1) card (j and k).
  // Cards that ended are skipped, unless they keep typed text.
  move(by) {
    const list = this.visibleCards();
    const at = list.findIndex((c) => c.hasFocus());
    for (let i = at < 0 ? (by > 0 ? 0 : list.length - 1) : at + by; i >= 0 && i < list.length; i += by) {
      if (!list[i].resolved || list[i].keptText) {
        list[i].focus();
        return;
      }
    }
  }

  // focused is the card holding the focus, if any.
  focused() {
    return this.order.find((c) => c.hasFocus()) || null;
  }

  // focusAfter moves the focus from a card that was just answered to the
  // next open card, before the answered one is disabled.
  focusAfter(card) {
    if (!card.hasFocus()) return;
    const list = this.visibleCards().filter((c) => c === card || (!c.resolved && !c.expired));
    const i = list.indexOf(card);
    const next = list[i + 1] || list[i - 1];
    if (next && next !== card) next.focus();
  }

  // openCard brings the person to card (a notification's click).
  openCard(card) {
    this.opts.show();
    card.focus();
  }

  // welcome tells the person about the cards that just arrived: one
  // announcement, one notification each, and focus to the newest unless
  // they are busy with something else.
  welcome() {
    const fresh = this.fresh.filter((c) => !c.resolved);
    this.fresh = [];
    if (fresh.length === 0) return;
    const shown = this.visibleCards();
    fresh.sort((a, b) => shown.indexOf(a) - shown.indexOf(b));
    const newest = fresh.reduce((x, c) => (c.createdAt >= x.createdAt ? c : x), fresh[0]);
    const from = newest.q.source_agent ? ` from ${newest.q.source_agent}` : "";
    this.opts.announce(fresh.length === 1
      ? `New question${from}: ${short(headline(newest.q))}`
      : `${fresh.length} new questions. Newest${from}: ${short(headline(newest.q))}`);
    for (const c of fresh.slice().reverse()) notify(c.q, short(headline(c.q), 200), () => this.openCard(c));
    // A card a link opened keeps the focus.
    const linked = fresh.includes(this.linked);
    this.linked = null;
    if (linked) return;
    // Someone reading (scrolled down, or in a card) is not moved: a pill
    // says a question arrived above.
    if (this.pill.offer(fresh)) return;
    const top = fresh.find((c) => shown.includes(c));
    if (top && this.opts.visible() && !busyElsewhere()) top.focus();
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
    setTimeout(() => card.article?.classList.remove("is-linked"), HIGHLIGHT);
  }

  // explain shows in a notice what became of interaction id.
  async explain(id) {
    const gen = this.gen;
    const text = await fateText(id, this.cards.get(id)?.expired);
    if (gen === this.gen) this.els.notice.textContent = text; // not signed out meanwhile
  }

  onResolved(card, kind, text) {
    dismiss(card.id);
    this.opts.announce(kind === "sent" ? text : `“${short(headline(card.q), 80)}”: ${text}`);
    // What became of an action is worth reading: it stays longer. A card
    // that ended while the person was typing keeps the text until
    // dismissed.
    if (!card.keptText) {
      setTimeout(() => this.remove(card), kind === "sent" && card.q.interaction_type !== "action" ? LINGER_SENT : LINGER_OTHER);
    }
    this.opts.resolved?.();
    this.pages.countsChanged();
    this.render();
  }

  // dismissCard removes an ended card that was kept (its Dismiss button).
  dismissCard(card) {
    this.remove(card);
  }

  // remove takes an ended card off the page into the "recently ended"
  // strip, passing its focus on to the next card.
  remove(card) {
    if (!this.cards.has(card.id)) return;
    const hadFocus = card.hasFocus();
    const order = this.order.filter((c) => c === card || !c.resolved);
    const i = order.indexOf(card);
    const next = order[i + 1] || order[i - 1];
    this.cards.delete(card.id);
    this.order = this.order.filter((c) => c !== card);
    this.pill.forget(card);
    if (card.resolved && (card.el?.isConnected || card.inPane)) this.ended.add(card.id, headline(card.q), card.outcomeText());
    this.panes.leaving(card, next && next !== card ? next : null);
    if (card.el) card.leave();
    else card.gone = true;
    if (hadFocus) {
      if (next && next !== card) next.focus();
      else this.els.heading.focus();
    }
    this.render();
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
      card.el?.remove();
    }
    this.panes.putBack();
    this.cards.clear();
    this.order = [];
    this.win.reset();
    this.els.cards.replaceChildren();
    this.ended.reset();
    this.pages.reset();
    this.pill.hide();
    this.ready = false;
    this.summarized = false;
    this.render();
  }

  // online runs when the live channel is back: answers that could not be
  // sent while the server was down are sent now.
  online() {
    for (const c of this.cards.values()) {
      if (c.unsent && !c.resolved && !c.busy) c.send();
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

  // loadedPending counts the pending questions loaded on the page.
  loadedPending() {
    let n = 0;
    for (const c of this.cards.values()) if (!c.resolved) n++;
    return n;
  }

  // pending counts the questions that can still be answered: those on
  // the page, and those the server counts that are not loaded yet.
  pending() {
    let n = 0;
    for (const c of this.cards.values()) if (!c.resolved && !c.expired) n++;
    return n + this.pages.unloaded();
  }

  render() {
    this.win.schedule();
    this.panes.fill();
    const n = this.pending();
    const { empty, sub, count } = this.els;
    count.textContent = String(n);
    count.hidden = n === 0;
    const shown = this.order.length;
    empty.hidden = !this.ready || shown > 0;
    const filtered = this.triage.filtered();
    empty.querySelector(".empty-title").textContent = filtered ? "Nothing matches" : "No questions waiting";
    empty.querySelector(".empty-text").textContent = filtered
      ? "No waiting question matches these filters. Clear them to see every question."
      : "When an agent asks for a decision, it appears here at once.";
    if (!this.ready && this.cards.size === 0) sub.textContent = "Loading questions…";
    else if (n === 0) sub.textContent = "You're all caught up.";
    else sub.textContent = n === 1 ? "1 question is waiting for you." : `${n} questions are waiting for you.`;
    this.opts.changed(n);
  }
}

// busyElsewhere reports whether the person is typing, working in a card,
// in a dialog or on one of the top bar's controls (as once a dialog they
// opened there closes), in which case a new card must not take the focus.
function busyElsewhere() {
  const a = document.activeElement;
  if (isTyping(a) || a?.closest?.("dialog, #topbar-end")) return true;
  // Working in a card, or reading one (its focus on it), keeps the
  // focus where it is.
  const card = a?.closest?.(".card");
  return !!card && !card.classList.contains("is-resolved");
}
