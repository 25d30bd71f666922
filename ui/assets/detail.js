// The detail view (/i/{id}): one interaction whole — its question and
// full context, what happens at its deadline, its metadata, what became
// of it, its timeline (from its events) and the same session's other
// questions. A pending question can be answered here, with the inbox's
// own card.

import { h } from "./dom.js";
import { getInteraction, getJSON } from "./api.js";
import { listPage } from "./listquery.js";
import { Card } from "./card.js";
import { renderMarkdown } from "./markdown.js";
import { TYPE_LABELS, channelName, timeEl } from "./format.js";
import { answerNode } from "./formvalue.js";
import { copyLinkButton, detailPath } from "./copylink.js";
import { durationText, endedAt, outcomeSentence, timeToAnswer } from "./outcome.js";
import { timelineList } from "./timeline.js";
import { deliveriesSection, loadDeliveries } from "./deliveries.js";
import { actionOutcome } from "./decision.js";
import { headline, subline } from "./summary.js";
import { riskNote } from "./risk.js";
import { editedArgs, editedView, proposedView } from "./editedview.js";

const STATUS_LABELS = { pending: "Waiting", answered: "Answered", expired: "Expired", cancelled: "Cancelled" };
const clock = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
// How many of the same session's questions are listed.
const SESSION_PAGE = 20;

export class DetailView {
  // els: {body}; opts: {announce(text)}
  constructor(els, opts) {
    this.els = els;
    this.opts = opts;
    this.id = "";
    this.gen = 0;
    this.card = null;
    this.ticker = null;
  }

  // show loads and shows interaction id; focus moves to its title when
  // asked to.
  show(id, focus) {
    if (id !== this.id) {
      this.id = id;
      this.load(focus, true);
      return;
    }
    if (focus) this.title()?.focus({ preventScroll: true });
  }

  hide() {
    this.gen += 1;
    this.id = "";
    this.stopCard();
    this.els.body.replaceChildren();
  }

  reset() {
    this.hide();
  }

  title() {
    return this.els.body.querySelector("#detail-title");
  }

  // handle follows the live channel: the shown question ending (anywhere)
  // or, after a reconnect, possibly having ended, reloads the view.
  handle(msg) {
    if (!this.id) return;
    const mine = msg.interaction_id === this.id && (msg.type === "hitl:resolved" || msg.type === "hitl:cancel");
    if (mine || msg.type === "hitl:replay_done") this.reloadSoon();
  }

  reloadSoon() {
    clearTimeout(this.reloadTimer);
    this.reloadTimer = setTimeout(() => this.load(false, false), 300);
  }

  // load reads the interaction, its events and its session, and renders
  // them; fresh is a new address (the loading state is shown).
  async load(focus, fresh) {
    const gen = ++this.gen;
    const id = this.id;
    if (fresh) {
      this.stopCard();
      document.title = "Question · hitl";
      this.els.body.replaceChildren(h("h1", { id: "detail-title", tabindex: "-1", class: "detail-loading", text: "Loading the question…" }));
      if (focus) this.title().focus({ preventScroll: true });
    }
    const r = await getInteraction(id);
    if (gen !== this.gen) return;
    if (!r.ok) {
      this.renderMissing(r, focus);
      return;
    }
    const it = r.data;
    const [evs, session, deliveries] = await Promise.all([events(id), sessionOthers(it), loadDeliveries(id)]);
    if (gen !== this.gen) return;
    // A pending card already on screen stays (what is typed in it too)
    // until the question ends.
    if (!fresh && it.status === "pending" && this.card && !this.card.resolved) {
      this.replace(".detail-timeline", timelineSection(it, evs));
      this.replace(".detail-session", sessionSection(it, session));
      this.replace(".detail-deliveries", deliveriesSection(deliveries));
      return;
    }
    const hadFocus = this.els.body.contains(document.activeElement);
    this.render(it, evs, session, deliveries);
    if (focus || (hadFocus && !this.els.body.contains(document.activeElement))) this.title().focus({ preventScroll: true });
  }

  replace(selector, node) {
    const old = this.els.body.querySelector(selector);
    if (old && node) old.replaceWith(node);
  }

  renderMissing(r, focus) {
    this.stopCard();
    const text = r.status === 404 ? "Question not found" : "The question could not be loaded";
    const why = r.status === 404
      ? "It does not exist, it was deleted after its retention period, or it is not meant for you."
      : r.error?.message || "The server could not be reached.";
    document.title = `${text} · hitl`;
    this.els.body.replaceChildren(
      h("h1", { id: "detail-title", tabindex: "-1", text }),
      h("p", { class: "notice notice-error detail-missing", role: "alert", text: why }));
    if (focus) this.title().focus({ preventScroll: true });
  }

  render(it, evs, session, deliveries) {
    this.stopCard();
    document.title = `${headline(it).slice(0, 60)} · hitl`;
    const body = this.els.body;
    const parts = [head(it)];
    if (it.status === "pending") {
      parts.push(answerSection(it, this.startCard(it)));
      if (it.context) parts.splice(1, 0, contextSection(it));
    } else {
      if (it.context) parts.push(contextSection(it));
      parts.push(outcomeSection(it));
    }
    parts.push(timelineSection(it, evs), deliveriesSection(deliveries), factsSection(it), sessionSection(it, session));
    body.replaceChildren(...parts.filter(Boolean));
  }

  // startCard builds the inbox's card for a pending interaction, so it
  // is answered exactly as in the inbox.
  startCard(it) {
    const card = new Card(it, {
      resolved: () => this.reloadSoon(),
      announce: (text) => this.opts.announce(text),
      changed: () => {},
      lookup: () => this.reloadSoon(),
    });
    card.article.classList.add("card-embedded");
    this.card = card;
    this.ticker = setInterval(() => card.tick(Date.now()), 1000);
    return card.el;
  }

  stopCard() {
    clearInterval(this.ticker);
    clearTimeout(this.reloadTimer);
    this.ticker = null;
    this.card = null;
  }
}

// events reads the interaction's timeline; null when it could not be.
async function events(id) {
  const all = [];
  let cursor = "";
  for (let i = 0; i < 10; i++) {
    const q = new URLSearchParams({ limit: "500" });
    if (cursor) q.set("cursor", cursor);
    const r = await getJSON(`/api/v1/interactions/${encodeURIComponent(id)}/events?${q}`);
    if (!r.ok) return all.length ? all : null;
    all.push(...r.data.events);
    cursor = r.data.next_cursor || "";
    if (!cursor) break;
  }
  return all;
}

// sessionOthers reads the newest other questions of the interaction's
// session; null when it has none or they could not be read.
async function sessionOthers(it) {
  if (!it.session_id) return null;
  const r = await listPage({ session_id: it.session_id, limit: SESSION_PAGE + 1 });
  if (!r.ok) return null;
  return r.data.interactions.filter((x) => x.session_id === it.session_id && x.interaction_id !== it.interaction_id).slice(0, SESSION_PAGE);
}

function head(it) {
  const meta = [];
  if (it.source_agent) meta.push(h("span", { class: "detail-agent", text: it.source_agent }));
  meta.push(h("span", {}, "asked ", timeEl(it.created_at)));
  return h("header", { class: "detail-head" },
    h("div", { class: "detail-badges" },
      h("span", { class: `status-badge status-${it.status}`, text: STATUS_LABELS[it.status] || it.status }),
      h("span", { class: `type-badge badge-${it.interaction_type}`, text: TYPE_LABELS[it.interaction_type] || it.interaction_type }),
      it.action?.name ? h("code", { class: "action-chip", text: it.action.name }) : null),
    h("h1", { id: "detail-title", class: "detail-title", tabindex: "-1", text: headline(it) }),
    subline(it) ? h("p", { class: "card-summary" }, h("code", { text: subline(it) })) : null,
    riskNote(it),
    h("div", { class: "detail-meta" },
      h("p", { class: "detail-by" }, meta.flatMap((m, i) => (i ? [" · ", m] : [m]))),
      copyLinkButton(it.interaction_id, headline(it))));
}

function section(cls, title, ...children) {
  const id = `detail-${cls}-title`;
  return h("section", { class: `detail-section detail-${cls}`, "aria-labelledby": id },
    h("h2", { id, class: "detail-h2", text: title }), ...children);
}

function contextSection(it) {
  return section("context", "Context", h("div", { class: "context md" }, renderMarkdown(it.context)));
}

function answerSection(it, cardEl) {
  return section("answer", "Your answer", cardEl);
}

// outcomeSection says what became of an ended question: who, what, how,
// when and how long it took.
function outcomeSection(it) {
  const res = it.result || {};
  const end = endedAt(it);
  const took = timeToAnswer(it);
  const action = it.interaction_type === "action" ? actionOutcome(it) : null;
  return section("outcome", "Outcome",
    h("p", { class: `detail-outcome detail-outcome-${it.status}` }, action ? action.text : `${outcomeSentence(it)}.`),
    it.interaction_type === "action" && it.action
      ? (editedArgs(res.value) ? editedView(it.action, editedArgs(res.value)) : proposedView(it.action)) : null,
    it.status === "answered" && !action && res.value !== undefined
      ? h("div", { class: "detail-value" }, answerNode(it, res.value)) : null,
    h("p", { class: "h-meta" },
      end ? [it.status === "expired" ? "Expired at " : "At ", h("time", { datetime: end.toISOString(), text: clock.format(end) })] : null,
      took !== null ? ` · answered in ${durationText(took)}` : null));
}

function timelineSection(it, evs) {
  if (evs === null) return section("timeline", "Timeline", h("p", { class: "h-meta", text: "The timeline could not be loaded." }));
  return section("timeline", "Timeline", timelineList(it, evs));
}

// factsSection lists what the agent sent besides the question.
function factsSection(it) {
  const rows = [];
  const add = (label, value) => {
    if (value === null || value === undefined || value === "") return;
    rows.push(h("dt", { text: label }), h("dd", {}, value));
  };
  add("Agent", it.source_agent);
  add("Session", it.session_id ? h("code", { text: it.session_id }) : null);
  add("Asked by", `${it.created_by || "an agent"} via ${channelName(it.created_via)}`);
  add("Asked at", clock.format(new Date(it.created_at)));
  const deadline = new Date(it.deadline);
  if (!Number.isNaN(deadline.getTime()) && deadline.getFullYear() > 1) add("Deadline", clock.format(deadline));
  add("At the deadline", atDeadline(it));
  add("Who may answer", targetsText(it.targets));
  add("Idempotency key", it.idempotency_key ? h("code", { text: it.idempotency_key }) : null);
  add("Interaction ID", h("code", { text: it.interaction_id }));
  if (it.metadata && Object.keys(it.metadata).length) add("Metadata", metadataNode(it.metadata));
  return section("facts", "Details", h("dl", { class: "kv facts-list" }, rows));
}

// atDeadline says what the agent gets if no one answers in time.
function atDeadline(it) {
  if (it.on_timeout === "default" && it.default_response !== undefined) {
    return h("span", {}, "the agent gets the default answer: ", answerNode(it, it.default_response));
  }
  return "the question expires and the agent is told no one answered";
}

function targetsText(t) {
  const users = t?.users || [];
  const groups = (t?.groups || []).map((g) => `group ${g}`);
  const all = [...users, ...groups];
  return all.length ? all.join(", ") : "anyone signed in";
}

// metadataNode shows the agent's metadata: one row per key, values as
// JSON when they are not plain text.
function metadataNode(md) {
  const dl = h("dl", { class: "kv detail-metadata" });
  for (const [k, v] of Object.entries(md)) {
    dl.append(h("dt", { text: k }), h("dd", {}, typeof v === "string" ? v : h("code", { class: "detail-json", text: JSON.stringify(v) })));
  }
  return dl;
}

// sessionSection lists the same session's other questions, each a link
// to its own detail view.
function sessionSection(it, others) {
  if (!it.session_id) return null;
  const title = "Same session";
  if (others === null) return section("session", title, h("p", { class: "h-meta", text: "The session's other questions could not be loaded." }));
  if (others.length === 0) return section("session", title, h("p", { class: "h-meta", text: "No other questions in this session." }));
  return section("session", title,
    h("ol", { class: "session-list" }, others.map((o) => h("li", { class: "session-item" },
      h("span", { class: `status-badge status-${o.status}`, text: STATUS_LABELS[o.status] || o.status }),
      h("a", { class: "session-link", href: detailPath(o.interaction_id), text: headline(o) }),
      h("span", { class: "h-meta" }, timeEl(o.created_at))))));
}
