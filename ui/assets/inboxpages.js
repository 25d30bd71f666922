// The inbox's pages: the live replay brings the first page of pending
// questions (?replay=page) with the cursor of the rest and the counts;
// further pages come from the list API as the end of the list nears the
// screen, so the page never holds every pending question at once. The
// counts (for the chips and the totals) are read again as questions come
// and go.

import { countsOf, listPage } from "./listquery.js";

// PAGE is how many questions one page holds.
export const PAGE = 50;
// How close to the screen the end of the list is when the next page is
// fetched, in px.
const NEAR = "1200px";
const COUNTS_DELAY = 400;

// Pages loads an Inbox's pages; inbox.els.more is the element after the
// last card that says when the end is near.
export class Pages {
  constructor(inbox) {
    this.inbox = inbox;
    this.reset();
    this.observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) this.more();
    }, { rootMargin: `0px 0px ${NEAR} 0px` });
    this.observer.observe(inbox.els.more);
  }

  reset() {
    this.next = null; // the cursor of the next page, null when there is none
    this.gen = (this.gen || 0) + 1;
    this.loading = false;
    this.complete = false; // every pending question the server has was loaded
    this.total = null;
    this.started = false;
    this.loadedAtCount = 0;
    clearTimeout(this.countsTimer);
  }

  // replayed takes a paged replay's cursor and counts. A later replay
  // (after a reconnect) only brings the counts up to date: the pages
  // loaded meanwhile stay.
  replayed(msg) {
    if (msg.counts) this.setCounts(msg.counts);
    if (this.started) return;
    this.started = true;
    const view = this.inbox.triage.view;
    if (msg.sort !== view.sort || this.inbox.triage.filtered()) {
      this.restart();
      return;
    }
    this.next = msg.next_cursor || null;
    this.complete = !this.next;
    this.more();
  }

  // restart fetches the first page in the current order and filters.
  async restart() {
    this.gen += 1;
    this.loading = false;
    this.next = null;
    await this.fetch(null);
    this.countsChanged();
  }

  // more fetches the next page when there is one and the end of the list
  // is near the screen.
  more() {
    if (!this.next || this.loading) return;
    const r = this.inbox.els.more.getBoundingClientRect();
    if (r.top > window.innerHeight + 1200) return;
    this.fetch(this.next);
  }

  async fetch(cursor) {
    const gen = this.gen;
    this.loading = true;
    const r = await listPage({ ...this.inbox.triage.query(), limit: PAGE, cursor: cursor || "" });
    if (gen !== this.gen) return;
    this.loading = false;
    if (!r.ok) return;
    for (const it of r.data.interactions || []) {
      if (it.status === "pending") this.inbox.add(it, true);
    }
    this.next = r.data.next_cursor || null;
    if (!this.next && !this.inbox.triage.filtered()) this.complete = true;
    this.inbox.render();
    // The new end may be near the screen still.
    requestAnimationFrame(() => this.more());
  }

  // countsChanged reads the counts again, soon (questions come and go in
  // bursts).
  countsChanged() {
    clearTimeout(this.countsTimer);
    this.countsTimer = setTimeout(() => this.readCounts(), COUNTS_DELAY);
  }

  async readCounts() {
    const gen = this.gen;
    const r = await countsOf({ status: "pending" });
    if (gen !== this.gen || !r.ok) return;
    this.setCounts(r.data);
  }

  setCounts(counts) {
    this.total = counts.total;
    this.loadedAtCount = this.inbox.loadedPending();
    this.inbox.triage.setCounts(counts);
    this.inbox.render();
  }

  // unloaded is how many pending questions the server counted that are
  // not on the page.
  unloaded() {
    if (this.complete || this.total === null) return 0;
    return Math.max(0, this.total - this.loadedAtCount);
  }
}
