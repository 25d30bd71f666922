// The inbox's window: with thousands of questions loaded, only the cards
// near the screen are on the page. The cards far above or below it are
// taken off (and give up their elements), each run of them replaced by a
// spacer as tall as they measured, so the scroll position and the
// scrollbar stay right; they come back as they near the screen. A card
// that holds something (the focus, an answer being sent, an outcome, an
// error) or is pinned on top never leaves.

// FROM is how many cards the list holds before it is windowed: a short
// list stays whole (no estimated heights, and the browser's find sees it).
const FROM = 120;
// GUESS is the height of a card never measured, in px, until one is.
const GUESS = 180;

// CardWindow lays out inbox.order in inbox.els.cards.
export class CardWindow {
  constructor(inbox) {
    this.inbox = inbox;
    this.box = inbox.els.cards;
    this.reset();
    const later = () => this.schedule();
    window.addEventListener("scroll", later, { passive: true });
    window.addEventListener("resize", later, { passive: true });
  }

  reset() {
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.heights = new WeakMap(); // card → its height with its margin, as measured
    this.total = 0; // the sum and count of the heights measured, for the guess
    this.measured = 0;
    this.shown = new Set(); // the cards on the page
    this.spacers = [];
    this.pos = new Map(); // card → its top within the list, at the last layout
  }

  // schedule lays the list out before the next frame.
  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.layout();
    });
  }

  // remeasure forgets the heights (the compact mode changed them).
  remeasure() {
    this.heights = new WeakMap();
    this.total = 0;
    this.measured = 0;
    this.schedule();
  }

  height(card) {
    return this.heights.get(card) ?? (this.measured ? this.total / this.measured : GUESS);
  }

  // layout puts on the page the cards near the screen, those that must
  // stay, and force (a card about to take the focus), with spacers for
  // the runs of cards in between.
  layout(force = null) {
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    const list = this.inbox.order;
    const whole = list.length <= FROM;
    const top = this.box.getBoundingClientRect().top;
    const margin = Math.max(1200, window.innerHeight);
    const from = -top - margin;
    const to = window.innerHeight - top + margin;
    const nodes = [];
    const shown = new Set();
    let run = 0;
    let spacer = 0;
    const flush = () => {
      if (run <= 0) return;
      nodes.push(this.spacer(spacer++, run));
      run = 0;
    };
    let y = 0;
    this.pos.clear();
    for (const card of list) {
      const h = this.height(card);
      this.pos.set(card, y);
      if (whole || (y + h >= from && y <= to) || card === force || card.soon() || card.holds() || card === this.inbox.linked) {
        flush();
        card.ensure();
        nodes.push(card.el);
        shown.add(card);
      } else {
        // A card fetched far from the screen was built off the page.
        if (card.el && !this.shown.has(card)) card.release();
        run += h;
      }
      y += h;
    }
    flush();
    this.spacers.length = spacer;
    place(this.box, nodes);
    for (const card of this.shown) {
      if (!shown.has(card)) card.release();
    }
    this.shown = shown;
    this.measure();
  }

  // measure records the height of the cards on the page.
  measure() {
    let margin = null;
    for (const card of this.shown) {
      if (!card.el?.isConnected || card.leaving) continue;
      margin ??= parseFloat(getComputedStyle(card.el).marginBottom) || 0;
      const h = card.el.getBoundingClientRect().height + margin;
      const before = this.heights.get(card);
      if (before === h) continue;
      if (before === undefined) this.measured += 1;
      this.total += h - (before || 0);
      this.heights.set(card, h);
    }
  }

  // spacer is the i-th spacer of the list, height px tall: an SVG whose
  // height attribute sizes it (the page sets no inline styles).
  spacer(i, height) {
    let el = this.spacers[i];
    if (!el) {
      el = document.createElementNS("http://www.w3.org/2000/svg", "svg");
      el.setAttribute("class", "cards-spacer");
      el.setAttribute("aria-hidden", "true");
      el.setAttribute("focusable", "false");
      el.setAttribute("width", "1");
      this.spacers[i] = el;
    }
    const px = String(Math.round(height));
    if (el.getAttribute("height") !== px) el.setAttribute("height", px);
    return el;
  }

  // above reports whether card is above the screen's top edge (less 60
  // px), on the page or not.
  above(card) {
    if (card.el?.isConnected) return card.el.getBoundingClientRect().bottom < 60;
    const y = this.pos.get(card);
    if (y === undefined) return false;
    return this.box.getBoundingClientRect().top + y + this.height(card) < 60;
  }
}

// place makes box's children nodes, in order, moving as few as it can;
// a card leaving (its collapse running) stays where it is. The focus
// stays where it was.
function place(box, nodes) {
  const active = document.activeElement;
  const want = new Set(nodes);
  for (const el of [...box.children]) {
    if (!want.has(el) && !el.classList.contains("is-leaving")) el.remove();
  }
  let at = box.firstElementChild;
  for (const el of nodes) {
    while (at && at !== el && at.classList.contains("is-leaving")) at = at.nextElementSibling;
    if (at === el) {
      at = at.nextElementSibling;
      continue;
    }
    box.insertBefore(el, at);
  }
  if (active && active !== document.activeElement && active.isConnected) active.focus({ preventScroll: true });
}
