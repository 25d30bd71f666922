// The "recently ended" strip of the inbox: a card that ended collapses
// into one line here (its question and outcome, linking to its detail
// view), the last few kept, with a link to History for the rest.

import { h } from "./dom.js";
import { detailPath } from "./copylink.js";

const KEEP = 5;

// EndedStrip is the strip; el is its (initially hidden) container.
export class EndedStrip {
  constructor(el) {
    this.el = el;
    this.list = h("ul", { class: "ended-list" });
    this.summary = h("summary", { class: "ended-summary" });
    this.el.replaceChildren(h("details", { class: "ended-details" }, this.summary, this.list,
      h("p", { class: "ended-more" }, h("a", { href: "/#history", text: "Everything that ended is in History" }))));
    this.el.hidden = true;
  }

  // add puts an ended card's question and outcome on top of the strip.
  add(id, question, outcome) {
    this.list.prepend(h("li", { class: "ended-item" },
      h("a", { href: detailPath(id), class: "ended-question", text: question }),
      h("span", { class: "ended-outcome", text: outcome })));
    while (this.list.children.length > KEEP) this.list.lastElementChild.remove();
    this.count = (this.count || 0) + 1;
    this.summary.textContent = this.count === 1 ? "1 recently ended" : `${this.count} recently ended`;
    this.el.hidden = false;
  }

  // reset empties it (signing out).
  reset() {
    this.list.replaceChildren();
    this.count = 0;
    this.el.hidden = true;
  }
}
