// The inbox's two panes, on screens 1200 px wide or more when the person
// asks for them: the list of questions on the left, one row each, and the
// focused question's whole card on the right. The card itself moves into
// the right pane (its draft, focus and state go with it) and its row in
// the list shows where it went; j and k, a click on a row, and answering
// (the focus moving on) choose the card on the right.

import { h } from "./dom.js";
import { TYPE_LABELS } from "./format.js";
import { headline } from "./summary.js";

// WIDE is the media query of a screen wide enough for two panes.
const WIDE = "(min-width: 1200px)";

// TwoPane lays an Inbox out in two panes. els: {panes, pane, empty};
// wanted() says whether the person asked for them.
export class TwoPane {
  constructor(inbox, els, wanted) {
    this.inbox = inbox;
    this.els = els;
    this.wanted = wanted;
    this.on = false;
    this.card = null; // the card in the right pane
    this.mq = matchMedia(WIDE);
    this.mq.addEventListener("change", () => this.apply());
    // A row clicked (or focused any other way) in the list goes right;
    // its Show button waits to be pressed, so Tab walks the rows.
    inbox.els.cards.addEventListener("focusin", (e) => {
      if (!this.on || this.moving || e.target.closest?.(".card-toggle")) return;
      const article = e.target.closest?.("article.card");
      const card = article && this.inbox.cards.get(article.dataset.id);
      if (card && card !== this.card) card.focus();
    });
  }

  // apply turns the two panes on or off, as the person's choice and the
  // screen's width say.
  apply() {
    const on = !!this.wanted() && this.mq.matches;
    if (on === this.on) return;
    const focused = this.inbox.focused();
    this.on = on;
    document.body.classList.toggle("is-two-pane", on);
    this.els.panes.classList.toggle("is-two-pane", on);
    this.els.pane.hidden = !on;
    for (const c of this.inbox.cards.values()) c.paneMode(on);
    if (!on) {
      this.putBack();
      focused?.focus();
      return;
    }
    this.fill(focused);
    if (focused) focused.focus();
  }

  // select shows card in the right pane (it is about to take the focus).
  select(card) {
    if (!this.on || card === this.card || card.gone) return;
    // The moves below take the focus out of the list: not a choice.
    this.moving = true;
    try {
      this.putBack();
      card.ensure();
      this.card = card;
      card.inPane = true;
      card.el.classList.add("is-picked");
      card.el.querySelector(".card-clip").replaceChildren(row(card));
      this.els.empty.hidden = true;
      this.els.pane.append(card.article);
      this.els.pane.scrollTop = 0;
    } finally {
      this.moving = false;
    }
  }

  // putBack returns the card in the right pane to its row.
  putBack() {
    const card = this.card;
    if (!card) return;
    this.card = null;
    card.inPane = false;
    this.els.empty.hidden = false;
    if (card.el && card.article) {
      card.el.classList.remove("is-picked");
      card.el.querySelector(".card-clip").replaceChildren(card.article);
    } else {
      card.article?.remove();
    }
  }

  // fill shows a card when the right pane is empty: prefer, else the
  // first in the list.
  fill(prefer = null) {
    if (!this.on || (this.card && this.inbox.order.includes(this.card))) return;
    const next = prefer || this.inbox.order.find((c) => !c.resolved) || this.inbox.order[0];
    if (next) this.select(next);
    else this.putBack();
  }

  // leaving is told that card leaves the list; next takes its place on
  // the right.
  leaving(card, next) {
    if (card !== this.card) return;
    this.putBack();
    if (next) this.select(next);
  }
}

// row is what a card's place in the list shows while the card is on the
// right: its type, question and agent, and that it is shown there.
function row(card) {
  const q = card.q;
  return h("div", { class: "card-row", onclick: () => card.focus() },
    h("span", { class: `type-badge badge-${q.interaction_type}`, text: TYPE_LABELS[q.interaction_type] || q.interaction_type }),
    h("span", { class: "card-row-question", text: headline(q) }),
    q.source_agent ? h("span", { class: "card-agent", text: q.source_agent }) : null,
    h("span", { class: "sr-only", text: "(shown on the right)" }));
}
