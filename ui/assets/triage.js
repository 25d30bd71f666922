// The inbox's triage bar: the order (deadline soonest or newest), filter
// chips per agent and per type with their counts, a session or project
// chosen from a card's tag, a search over the question and context, the
// compact mode and the two panes. It holds the person's choices (kept in
// local storage) and says when they change. On phones the chips fold
// behind one Filters button that counts the filters on.

import { h } from "./dom.js";
import { TYPE_LABELS } from "./format.js";
import { projectName, projectOf } from "./audience.js";

const STORE = "hitl:triage";
const SEARCH_DELAY = 250;

// FILTERS are the view's fields that narrow the list.
const FILTERS = ["agent", "type", "session", "project"];

// Triage is the bar. els: {bar, sort, q, compact, panes, filtersBtn,
// filtersCount, filters, scope, agents, types}; opts.changed(view, what)
// runs after a change ("order", "compact" or "panes").
export class Triage {
  constructor(els, opts) {
    this.els = els;
    this.opts = opts;
    this.view = { sort: "deadline", q: "", compact: false, panes: false, ...load() };
    if (!["deadline", "newest"].includes(this.view.sort)) this.view.sort = "deadline";
    for (const f of FILTERS) this.view[f] = "";
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
    els.panes.addEventListener("click", () => {
      this.view.panes = !this.view.panes;
      this.save();
      this.showCompact();
      opts.changed(this.view, "panes");
    });
    els.filtersBtn.addEventListener("click", () => this.showFilters(els.filtersBtn.getAttribute("aria-expanded") !== "true"));
    this.showCompact();
    this.counts = null;
  }

  // showFilters unfolds (or folds) the chips behind the Filters button.
  showFilters(open) {
    this.els.filtersBtn.setAttribute("aria-expanded", open ? "true" : "false");
    this.els.filters.classList.toggle("is-open", open);
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
    return this.active() > 0 || !!this.view.q;
  }

  // active counts the filters on (the search aside).
  active() {
    return FILTERS.filter((f) => this.view[f]).length;
  }

  // query is the list API's filter for the pending questions in view.
  query() {
    const v = this.view;
    return { status: "pending", sort: v.sort, agent: v.agent, type: v.type, session_id: v.session, project: v.project, q: v.q };
  }

  // only narrows the list to one session or one project (a card's tag
  // clicked), or back to all of them with "".
  only(field, value) {
    this.set({ [field]: value });
  }

  // matches reports whether a question (a live message or a listed
  // interaction) is in view, as the server's filter would say.
  matches(q) {
    const v = this.view;
    if (v.agent && (q.source_agent || "") !== v.agent) return false;
    if (v.type && q.interaction_type !== v.type) return false;
    if (v.session && (q.session_id || "") !== v.session) return false;
    if (v.project && projectOf(q) !== v.project) return false;
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
    // The session and the project chosen from a card: a pressed chip
    // each, which clears it.
    const scope = [];
    if (this.view.project) scope.push(this.chip("project", this.view.project, `Project ${projectName(this.view.project)}`, null));
    if (this.view.session) scope.push(this.chip("session", this.view.session, `Session ${this.view.session}`, null));
    this.els.scope.replaceChildren(...scope);
    this.els.scope.closest(".triage-group").hidden = scope.length === 0;
    // The Filters button (phones): how many are on, and there only when
    // there is something to show.
    const n = this.active();
    this.els.filtersCount.hidden = n === 0;
    this.els.filtersCount.textContent = n ? String(n) : "";
    if (n) this.els.filtersBtn.setAttribute("aria-label", `Filters, ${n} on`);
    else this.els.filtersBtn.removeAttribute("aria-label");
    this.els.filtersBtn.hidden = n === 0 && [...this.els.filters.querySelectorAll(".triage-group")].every((g) => g.hidden);
  }

  // chip is one filter button: pressed while it filters; n is its count
  // (null: none shown).
  chip(field, value, label, n) {
    const on = this.view[field] === value;
    return h("button", {
      type: "button",
      class: "chip",
      "aria-pressed": on ? "true" : "false",
      title: field === "project" || field === "session" ? `${label} (press to show every ${field})` : null,
      onclick: () => this.set({ [field]: on ? "" : value }),
    }, h("span", { class: "chip-label", text: label }), n === null ? null : h("span", { class: "chip-count", text: String(n) }));
  }

  showCompact() {
    this.els.compact.setAttribute("aria-pressed", this.view.compact ? "true" : "false");
    this.els.panes.setAttribute("aria-pressed", this.view.panes ? "true" : "false");
  }

  // focusSearch puts the keyboard in the search box.
  focusSearch() {
    this.els.q.focus();
    this.els.q.select();
  }

  save() {
    try {
      localStorage.setItem(STORE, JSON.stringify({ sort: this.view.sort, compact: this.view.compact, panes: this.view.panes }));
    } catch {
      // storage unavailable: the choice lasts for this page
    }
  }
}

function load() {
  try {
    const v = JSON.parse(localStorage.getItem(STORE) || "{}");
    return v && typeof v === "object" ? { sort: v.sort, compact: !!v.compact, panes: !!v.panes } : {};
  } catch {
    return {};
  }
}
