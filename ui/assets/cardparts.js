// Parts of a card that help under time pressure: the context clamped to
// a few lines with "Show more", the details disclosure (agent, session,
// metadata), button names that carry their question, and the answer a
// person was typing when the card ended, kept read-only with Copy.

import { h, uid } from "./dom.js";
import { copyText } from "./copylink.js";
import { renderMarkdown } from "./markdown.js";
import { getInteraction } from "./api.js";

// A context longer than this (in characters or lines) is clamped.
const CLAMP_CHARS = 320;
const CLAMP_LINES = 5;

// contextBlock renders a card's context, clamped when long, and returns
// {el, firstId}: firstId names its first paragraph (the card's
// description).
export function contextBlock(text, id) {
  const body = h("div", { class: "context md", id }, renderMarkdown(text));
  labelCode(body);
  const first = body.firstElementChild;
  let firstId = id;
  if (first && body.children.length > 1) {
    firstId = uid("ctx1");
    first.id = firstId;
  }
  const long = text.length > CLAMP_CHARS || text.split("\n").length > CLAMP_LINES;
  if (!long) return { el: body, firstId };
  body.classList.add("is-clamped");
  const more = h("button", { type: "button", class: "btn btn-quiet btn-small context-more", "aria-expanded": "false", "aria-controls": id, text: "Show more" });
  more.addEventListener("click", () => {
    const open = body.classList.toggle("is-clamped") === false;
    more.setAttribute("aria-expanded", open ? "true" : "false");
    more.textContent = open ? "Show less" : "Show more";
  });
  return { el: h("div", { class: "context-wrap" }, body, more), firstId };
}

// labelCode makes the code blocks in el focusable, labelled regions (a
// long line scrolls or wraps; the keyboard can reach it either way).
export function labelCode(el) {
  for (const pre of el.querySelectorAll("pre.md-pre:not([role])")) {
    pre.tabIndex = 0;
    pre.setAttribute("role", "region");
    pre.setAttribute("aria-label", "Code");
  }
}

// detailsBlock is the disclosure with a question's agent, session and
// metadata; the metadata is fetched when it is first opened, unless q
// carries it (a listed interaction does, a live message does not).
export function detailsBlock(q) {
  const list = h("dl", { class: "card-details-list" });
  const row = (k, v) => [h("dt", { text: k }), h("dd", {}, v)];
  const fill = (meta) => {
    list.replaceChildren(
      ...row("Agent", q.source_agent || "not given"),
      ...(q.session_id ? row("Session", h("code", { text: q.session_id })) : []),
      ...row("Question id", h("code", { text: q.interaction_id })));
    const entries = Object.entries(meta || {});
    if (entries.length === 0) list.append(...row("Metadata", "none"));
    for (const [k, v] of entries) {
      list.append(...row(k, h("code", { class: "meta-value", text: typeof v === "string" ? v : JSON.stringify(v) })));
    }
  };
  fill(q.metadata);
  const details = h("details", { class: "card-details" }, h("summary", { text: "Details and metadata" }), list);
  let fetched = q.metadata !== undefined;
  details.addEventListener("toggle", async () => {
    if (!details.open || fetched) return;
    fetched = true;
    const r = await getInteraction(q.interaction_id);
    if (r.ok) fill(r.data.metadata);
  });
  return details;
}

// nameButtons gives the card's buttons names that carry the question
// ("Approve: Deploy build 1432…"), and an approval's buttons their
// shortcuts.
export function nameButtons(buttons, question, type) {
  const q = question.length > 80 ? `${question.slice(0, 79)}…` : question;
  for (const b of buttons) {
    const label = b.textContent.trim();
    if (!label || b.hasAttribute("aria-label")) continue;
    b.setAttribute("aria-label", `${label}: ${q}`);
    if (type === "approval" || type === "action") {
      if (b.classList.contains("btn-approve")) b.setAttribute("aria-keyshortcuts", "A");
      if (b.classList.contains("btn-reject")) b.setAttribute("aria-keyshortcuts", "R");
    }
  }
}

// typedText is what the person typed in a card's text fields (the
// longest), or "".
export function typedText(form) {
  let best = "";
  for (const el of form.querySelectorAll("textarea, input[type=text], input:not([type])")) {
    const v = el.value.trim();
    if (v.length > best.length) best = v;
  }
  return best;
}

// keptBlock shows text typed into a card that ended, read-only, with
// Copy and Dismiss.
export function keptBlock(text, announce, dismiss) {
  const id = uid("kept");
  const area = h("textarea", { class: "input kept-text", id, readonly: true, rows: "3", value: text });
  const copy = h("button", { type: "button", class: "btn btn-secondary btn-small kept-copy", text: "Copy" });
  copy.addEventListener("click", async () => {
    if (await copyText(text)) {
      announce("Your text is copied.");
      return;
    }
    area.focus();
    area.select();
    announce("The text could not be copied by itself: it is selected, copy it with Ctrl+C.");
  });
  const close = h("button", { type: "button", class: "btn btn-quiet btn-small", onclick: dismiss, text: "Dismiss" });
  return h("div", { class: "kept" },
    h("label", { class: "kept-label", for: id, text: "What you typed (not sent)" }),
    area,
    h("div", { class: "kept-actions" }, copy, close));
}
