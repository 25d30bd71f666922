// An action's arguments, rendered for reading exactly as the agent will
// use them (never a paraphrase): a shell command (Bash) as a code block, a
// file write or edit (Write, Edit, MultiEdit) as a diff, anything else as
// a key/value view with long values folded. Also the difference between
// proposed and edited arguments.

import { h } from "./dom.js";
import { lineDiff, diffStats } from "./diff.js";
import { codeBlock, diffBlock, statsText, visibleText } from "./codeview.js";

// A string longer than this, or with more lines, is folded.
const FOLD_CHARS = 160;
const FOLD_LINES = 3;

// actionArgs returns an action's arguments as an object ({} when they are
// not one).
export function actionArgs(action) {
  let a = action?.args;
  if (typeof a === "string") {
    try {
      a = JSON.parse(a);
    } catch {
      a = null;
    }
  }
  return a && typeof a === "object" && !Array.isArray(a) ? a : {};
}

const isString = (v) => typeof v === "string";

// argsView renders action's arguments for reading.
export function argsView(action) {
  const args = actionArgs(action);
  const name = action?.name || "";
  if (name === "Bash" && isString(args.command)) {
    return h("div", { class: "args" },
      codeBlock(args.command, { label: "Command", prompt: true, cls: "code-command" }),
      rest(args, ["command"]));
  }
  if (name === "Write" && isString(args.file_path) && isString(args.content)) {
    return h("div", { class: "args" },
      fileDiff(args.file_path, "", args.content, "New content"),
      rest(args, ["file_path", "content"]));
  }
  if (name === "Edit" && isString(args.file_path) && isString(args.old_string) && isString(args.new_string)) {
    return h("div", { class: "args" },
      fileDiff(args.file_path, args.old_string, args.new_string, "", replaceNote(args.replace_all)),
      rest(args, ["file_path", "old_string", "new_string", "replace_all"]));
  }
  if (name === "MultiEdit" && isString(args.file_path) && Array.isArray(args.edits) && args.edits.length > 0 &&
      args.edits.every((e) => e && isString(e.old_string) && isString(e.new_string))) {
    const n = args.edits.length;
    return h("div", { class: "args" },
      args.edits.map((e, i) => [
        fileDiff(args.file_path, e.old_string, e.new_string, `Edit ${i + 1} of ${n}`, replaceNote(e.replace_all)),
        rest(e, ["old_string", "new_string", "replace_all"]),
      ]),
      rest(args, ["file_path", "edits"]));
  }
  return h("div", { class: "args" }, kvView(args));
}

function replaceNote(all) {
  return all === true ? "every occurrence" : null;
}

// fileDiff is one change to a file: its path as the title, the diff from
// before to after.
function fileDiff(path, before, after, what, note = null) {
  const ops = lineDiff(before, after);
  const stats = statsText(diffStats(ops));
  const title = [
    what ? h("span", { class: "code-title-what", text: what }) : null,
    h("span", { class: "code-path" }, visibleText(path)),
    h("span", { class: "code-title-note", text: note ? `${stats}; ${note}` : stats }),
  ];
  return diffBlock(ops, { label: `${what || "Edit"}: ${path}`, title, noEOL: before !== "" && before.endsWith("\n") !== after.endsWith("\n") });
}

// rest is the key/value view of the arguments not named in skip, or null
// when there are none.
function rest(args, skip) {
  const left = Object.fromEntries(Object.entries(args).filter(([k]) => !skip.includes(k)));
  return Object.keys(left).length > 0 ? kvView(left) : null;
}

// kvView lists an object's keys and values, long values folded.
export function kvView(obj) {
  const entries = Object.entries(obj);
  if (entries.length === 0) return h("p", { class: "args-none", text: "No arguments." });
  return h("dl", { class: "args-kv" }, entries.map(([k, v]) => [
    h("dt", {}, visibleText(k)),
    h("dd", {}, valueView(k, v)),
  ]));
}

// valueView shows one value: a short string as text, a short JSON value
// inline, a long one folded.
function valueView(key, v) {
  if (isString(v)) {
    const lines = v.split("\n").length;
    if (v === "") return h("span", { class: "args-empty", text: "(empty text)" });
    if (v.length <= FOLD_CHARS && lines <= FOLD_LINES) return h("span", { class: "args-text" }, visibleText(v));
    return fold(key, v, `${lines} line${lines === 1 ? "" : "s"}, ${v.length.toLocaleString()} characters`, firstLine(v));
  }
  const json = JSON.stringify(v);
  if (json.length <= FOLD_CHARS / 2) return h("code", { class: "args-json" }, visibleText(json));
  const pretty = JSON.stringify(v, null, 2);
  const what = Array.isArray(v) ? `${v.length} item${v.length === 1 ? "" : "s"}` : `${Object.keys(v).length} field${Object.keys(v).length === 1 ? "" : "s"}`;
  return fold(key, pretty, what, json.slice(0, 60));
}

function fold(key, text, what, preview) {
  return h("details", { class: "args-fold" },
    h("summary", {},
      h("span", { class: "args-preview" }, visibleText(preview)),
      h("span", { class: "args-size", text: ` (${what})` })),
    codeBlock(text, { label: `${key}, in full` }));
}

function firstLine(s) {
  const l = s.split("\n", 1)[0];
  return l.length > 80 ? `${l.slice(0, 79)}…` : `${l}${s.includes("\n") ? " …" : ""}`;
}

// changedKeys lists the top-level arguments that differ between a and b,
// in sorted order.
export function changedKeys(a, b) {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => !sameJSON(a[k], b[k])).sort();
}

// sameJSON compares two JSON values (objects key by key, in any order).
export function sameJSON(a, b) {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((v, i) => sameJSON(v, b[i]));
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && sameJSON(a[k], b[k]));
}

// changesView shows what an edit changed: for each argument that differs,
// a line diff of its text (strings) or of its JSON (anything else).
export function changesView(before, after) {
  const keys = changedKeys(before, after);
  if (keys.length === 0) return h("p", { class: "args-none", text: "No change: this is an approval as proposed." });
  return h("div", { class: "changes" }, keys.map((k) => {
    const had = Object.hasOwn(before, k);
    const has = Object.hasOwn(after, k);
    // Text as text when both sides are text; else both as JSON, so that a
    // change of type ("30" to 30) shows.
    const raw = (!had || isString(before[k])) && (!has || isString(after[k]));
    const text = (v, present) => (!present ? "" : raw ? v : JSON.stringify(v, null, 2));
    const a = text(before[k], had);
    const b = text(after[k], has);
    const ops = lineDiff(a, b);
    const what = !had ? "added" : !has ? "removed" : "changed";
    const title = [h("span", { class: "code-path" }, visibleText(k)), h("span", { class: "code-title-note", text: what })];
    return diffBlock(ops, { label: `${k}, ${what}`, title, noEOL: had && has && a !== "" && a.endsWith("\n") !== b.endsWith("\n") });
  }));
}
