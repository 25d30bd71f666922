// The inbox's triage bar: the order (deadline soonest or newest), filter
// chips per agent and per type with their counts, a search over the
// question and context, and the compact mode. It holds the person's
// choices (kept in local storage) and says when they change.

import { h } from "./dom.js";
import { TYPE_LABELS } from "./format.js";

const STORE = "hitl:triage";
const SEARCH_DELAY = 250;

// Triage is the bar. els: {bar, sort, q, compact, agents, types};
// opts.changed(view, what) runs after a change ("order" or "compact").
export class Triage {
  constructor(els, opts) {
    this.els = els;
    this.opts = opts;
    this.view = { sort: "deadline", agent: "", type: "", q: "", compact: false, ...load() };
    if (!["deadline", "newest"].includes(this.view.sort)) this.view.sort = "deadline";
    this.view.agent = "";
    this.view.type = "";
    this.view.q = "";
    els.sort.value = this.view.sort;
    els.sort.addEventListener("change", () => this.set({ sort: els.sort.value }));
    els.q.addEventListener("input", () => {
      clearTimeout(this.searchTimer);
      this.searchTimer = setTimeout(() => this.set({ q: els.q.value.trim() }), SEARCH_DELAY);
    });
    els.q.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && els.q.value) {
        e.stopPropagation();
        els.q.value = "";
        this.set({ q: "" });
      }
    });
    els.bar.addEventListener("submit", (e) => e.preventDefault());
    els.compact.addEventListener("click", () => {
      this.view.compact = !this.view.compact;
      this.save();
      this.showCompact();
      opts.changed(this.view, "compact");
    });
    this.showCompact();
    this.counts = null;
  }

  // set changes the order or the filters.
  set(change) {
    const before = JSON.stringify(this.view);
    Object.assign(this.view, change);
    if (JSON.stringify(this.view) === before) return;
    this.save();
    this.renderChips();
    this.opts.changed(this.view, "order");
  }

  // filtered reports whether a filter or a search narrows the list.
  filtered() {
    return !!(this.view.agent || this.view.type || this.view.q);
  }

  // query is the list API's filter for the pending questions in view.
  query() {
    const v = this.view;
    return { status: "pending", sort: v.sort, agent: v.agent, type: v.type, q: v.q };
  }

  // matches reports whether a question (a live message or a listed
  // interaction) is in view, as the server's filter would say.
  matches(q) {
    const v = this.view;
    if (v.agent && (q.source_agent || "") !== v.agent) return false;
    if (v.type && q.interaction_type !== v.type) return false;
    if (v.q) {
      const needle = v.q.toLowerCase();
      if (!`${q.question || ""} ${q.summary || ""}`.toLowerCase().includes(needle) && !String(q.context || "").toLowerCase().includes(needle)) return false;
    }
    return true;
  }

  // setCounts shows the counts of GET /api/v1/interactions/counts on the
  // chips.
  setCounts(counts) {
    this.counts = counts;
    this.renderChips();
  }

  renderChips() {
    const c = this.counts || { by_agent: {}, by_type: {} };
    const agents = Object.entries(c.by_agent || {}).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    if (this.view.agent && !agents.some(([a]) => a === this.view.agent)) agents.push([this.view.agent, 0]);
    const types = Object.entries(c.by_type || {}).sort((a, b) => b[1] - a[1]);
    if (this.view.type && !types.some(([t]) => t === this.view.type)) types.push([this.view.type, 0]);
    this.els.agents.replaceChildren(...agents.map(([a, n]) => this.chip("agent", a, a || "no agent", n)));
    this.els.types.replaceChildren(...types.map(([t, n]) => this.chip("type", t, TYPE_LABELS[t] || t, n)));
    this.els.agents.closest(".triage-group").hidden = agents.length < 2 && !this.view.agent;
    this.els.types.closest(".triage-group").hidden = types.length < 2 && !this.view.type;
  }

  // chip is one filter button: pressed while it filters.
  chip(field, value, label, n) {
    const on = this.view[field] === value;
    return h("button", {
      type: "button",
      class: "chip",
      "aria-pressed": on ? "true" : "false",
      onclick: () => this.set({ [field]: on ? "" : value }),
    }, h("span", { class: "chip-label", text: label }), h("span", { class: "chip-count", text: String(n) }));
  }

  showCompact() {
    this.els.compact.setAttribute("aria-pressed", this.view.compact ? "true" : "false");
  }

  // focusSearch puts the keyboard in the search box.
  focusSearch() {
    this.els.q.focus();
    this.els.q.select();
  }

  save() {
    try {
      localStorage.setItem(STORE, JSON.stringify({ sort: this.view.sort, compact: this.view.compact }));
    } catch {
      // storage unavailable: the choice lasts for this page
    }
  }
}

function load() {
  try {
    const v = JSON.parse(localStorage.getItem(STORE) || "{}");
    return v && typeof v === "object" ? { sort: v.sort, compact: !!v.compact } : {};
  } catch {
    return {};
  }
}
