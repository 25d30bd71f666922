// Questions that arrive while the person reads: the page does not move
// (a card put above the screen keeps what is on screen where it was) and
// a "1 new question ↑" pill says where they went.

// NewPill is the pill; el is its button (with a .pill-text), cards the
// list, focusTop(cards) focuses the topmost of the new cards and
// above(card) says whether a card (on the page or not) is above the
// screen.
export class NewPill {
  constructor(el, cards, focusTop, above) {
    this.el = el;
    this.cards = cards;
    this.above = above;
    this.unseen = new Set();
    el.addEventListener("click", () => {
      const seen = [...this.unseen];
      this.hide();
      window.scrollTo({ top: 0, behavior: "auto" });
      focusTop(seen);
    });
    window.addEventListener("scroll", () => {
      if (this.unseen.size > 0 && window.scrollY <= 4) this.hide();
    }, { passive: true });
  }

  // offer shows the pill for the cards of fresh that went above the
  // screen while the page is scrolled; it reports whether it did.
  offer(fresh) {
    if (window.scrollY <= 0) return false;
    const above = fresh.filter((c) => this.above(c));
    if (above.length === 0) return false;
    for (const c of above) this.unseen.add(c);
    const n = this.unseen.size;
    this.el.querySelector(".pill-text").textContent = n === 1 ? "1 new question" : `${n} new questions`;
    this.el.hidden = false;
    return true;
  }

  forget(card) {
    this.unseen.delete(card);
    if (this.unseen.size === 0) this.el.hidden = true;
  }

  hide() {
    this.unseen.clear();
    this.el.hidden = true;
  }

  // anchor is the first card on screen and its position, so that
  // inserting above it does not move what the person is reading.
  anchor() {
    if (window.scrollY <= 0) return null;
    for (const el of this.cards.querySelectorAll(":scope > .card-wrap")) {
      const top = el.getBoundingClientRect().top;
      if (top >= 0) return { el, top };
    }
    return null;
  }

  // keep scrolls back by however far anchor moved.
  keep(anchor) {
    if (!anchor || !anchor.el.isConnected) return;
    const delta = anchor.el.getBoundingClientRect().top - anchor.top;
    if (Math.abs(delta) >= 1) window.scrollBy(0, delta);
  }
}
