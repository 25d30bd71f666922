// Code for reading: a command or a file's text exactly as an agent would
// use it, and a line diff with +/- markers. Every block is a focusable,
// labelled region (it may scroll), and characters that would not show
// (controls, bidirectional overrides, zero-width spaces) are shown by
// name, so that what is read is what runs.

import { h, uid } from "./dom.js";

// Characters that draw nothing or reorder what follows: C0 and C1
// controls but the line break and the tab, Unicode format characters
// (bidirectional controls, zero-width spaces, the BOM, soft hyphens), and
// the line and paragraph separators.
const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\p{Cf}\u2028\u2029]/gu;

// visibleText returns s as nodes: text, with each hidden character as a
// marked span naming its code point.
export function visibleText(s) {
  const str = String(s);
  const out = [];
  let last = 0;
  for (const m of str.matchAll(HIDDEN)) {
    if (m.index > last) out.push(str.slice(last, m.index));
    const cp = m[0].codePointAt(0).toString(16).toUpperCase().padStart(4, "0");
    out.push(h("span", { class: "hidden-char", title: `Invisible character U+${cp}`, text: `U+${cp}` },
      h("span", { class: "sr-only", text: " (invisible character)" })));
    last = m.index + m[0].length;
  }
  if (last < str.length) out.push(str.slice(last));
  return out;
}

// hasHidden reports whether s holds a character visibleText marks.
export function hasHidden(s) {
  HIDDEN.lastIndex = 0;
  return HIDDEN.test(String(s));
}

// codeBlock shows text as code, in a focusable region named label; title,
// when given, heads it (such as a file's path), and prompt marks a shell
// command.
export function codeBlock(text, { label, title = null, prompt = false, cls = "" } = {}) {
  const id = uid("code");
  return h("figure", { class: `code ${cls}` },
    title ? h("figcaption", { class: "code-title", id: `${id}-t` }, title) : null,
    h("pre", {
      class: `code-body${prompt ? " code-prompt" : ""}`, tabindex: "0", role: "region", "aria-label": label,
      "aria-describedby": title ? `${id}-t` : null,
    }, h("code", {}, visibleText(text))),
    hiddenNote(text));
}

// hiddenNote warns when text holds characters that would not show.
function hiddenNote(text) {
  if (!hasHidden(text)) return null;
  return h("figcaption", { class: "code-warn", text: "Holds invisible characters, shown by their code points (U+…)." });
}

const SIGNS = { " ": " ", "-": "-", "+": "+" };
const SPOKEN = { " ": "", "-": "Removed: ", "+": "Added: " };

// diffBlock shows a line diff (lineDiff's ops) in a focusable region named
// label. Lines carry a +/- sign as well as a colour. noEOL marks the last
// lines without a line break, when the two sides differ in that.
export function diffBlock(ops, { label, title = null, noEOL = false, cls = "" } = {}) {
  const id = uid("diff");
  const rows = ops.map((o) => {
    const tag = o.op === "+" ? "ins" : o.op === "-" ? "del" : "span";
    return h("div", { class: `diff-line diff-${o.op === "+" ? "add" : o.op === "-" ? "del" : "ctx"}` },
      h("span", { class: "diff-sign", "aria-hidden": "true", text: SIGNS[o.op] }),
      h(tag, { class: "diff-text" },
        SPOKEN[o.op] ? h("span", { class: "sr-only", text: SPOKEN[o.op] }) : null,
        visibleText(o.text),
        noEOL && !o.eol && o.op !== " " ? h("span", { class: "diff-noeol", text: " (no line break at the end)" }) : null));
  });
  const text = ops.map((o) => o.text).join("\n");
  return h("figure", { class: `code diff ${cls}` },
    title ? h("figcaption", { class: "code-title", id: `${id}-t` }, title) : null,
    h("div", {
      class: "code-body diff-body", tabindex: "0", role: "region", "aria-label": label,
      "aria-describedby": title ? `${id}-t` : null,
    }, rows.length > 0 ? rows : h("div", { class: "diff-line diff-empty", text: "(empty)" })),
    hiddenNote(text));
}

// statsText says how many lines a diff adds and removes ("+3 −1").
export function statsText({ added, removed }) {
  const parts = [];
  if (added) parts.push(`${added} line${added === 1 ? "" : "s"} added`);
  if (removed) parts.push(`${removed} line${removed === 1 ? "" : "s"} removed`);
  return parts.join(", ") || "no change";
}
