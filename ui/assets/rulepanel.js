// "Always allow…": approve an action and make a rule that approves the
// calls like it from now on. The panel previews the rule before it is
// saved (the agent and the action are the card's; which calls, and until
// when, the person chooses, starting from the suggestion of ruletext.js),
// and the answer carries it as "always", so the rule is made in the same
// transaction as the approval.

import { h, uid } from "./dom.js";
import { risks } from "./risk.js";
import { agentText, dirGlob, firstWords, kindText, matchKind, matchText, shellControl, suggestMatch } from "./ruletext.js";

const KINDS = [
  ["prefix", "When a command starts with"],
  ["command", "When a command is exactly"],
  ["glob", "When an argument matches a path pattern"],
  ["equals", "When an argument is exactly"],
  ["any", "Every call, whatever the arguments"],
];

// A rule expires in a day unless the person chooses otherwise.
const DEFAULT_EXPIRY = 86400;

// Expiry choices, in seconds (0: until revoked).
const EXPIRIES = [
  [0, "Never (until revoked)"],
  [3600, "In 1 hour"],
  [8 * 3600, "In 8 hours"],
  [86400, "In 1 day"],
  [7 * 86400, "In 7 days"],
  [30 * 86400, "In 30 days"],
];

// selectField builds a labelled select.
function selectField(label, options, cls) {
  const id = uid("rule");
  const control = h("select", { id, class: `input ${cls}` },
    options.map(([value, text]) => h("option", { value: String(value), text })));
  const el = h("div", { class: "field" }, h("label", { class: "field-label", for: id, text: label }), control);
  return { el, control };
}

// rulePanel returns the panel for the action of q, whose arguments are
// args: {el, focus(), read(), parse(message), showErrors(list)}.
export function rulePanel(q, args) {
  const name = q.action?.name || "";
  const suggested = suggestMatch(name, args);
  const keys = Object.keys(args);
  const stringKeys = keys.filter((k) => typeof args[k] === "string");
  const kinds = KINDS.filter(([k]) => k === "any" || (k === "equals" ? keys.length > 0 : stringKeys.length > 0));

  const kind = selectField("Which calls", kinds, "rule-kind");
  const arg = selectField("Argument", keys.map((k) => [k, k]), "rule-arg");
  const valueID = uid("rule");
  const valueLabel = h("label", { class: "field-label", for: valueID });
  const valueHint = h("p", { class: "field-hint", id: `${valueID}-hint` });
  const valueErr = h("p", { class: "field-error", id: `${valueID}-err`, hidden: true });
  // A textarea, so that an exact command with line breaks keeps them.
  const value = h("textarea", {
    id: valueID, rows: 1, class: "input input-mono rule-value-input", autocomplete: "off", spellcheck: "false", autocapitalize: "none",
    "aria-describedby": `${valueID}-hint ${valueID}-err`,
  });
  const valueField = h("div", { class: "field rule-value" }, valueLabel, valueHint, value, valueErr);
  const expiry = selectField("Expires", EXPIRIES, "rule-expiry");
  // For all my agents: a rule on the action's kind, when it has one.
  const actionKind = q.action?.kind || "";
  const input = q.action?.input || {};
  const scopeID = uid("rule");
  const scope = h("input", { type: "checkbox", id: scopeID, class: "rule-scope" });
  const scopeField = h("div", { class: "field rule-scope-field", hidden: !actionKind },
    h("label", { class: "check", for: scopeID }, scope,
      ` For all my agents: every ${kindText(actionKind)} that matches, whichever agent asks`));
  const previewID = uid("rule");
  const preview = h("p", { class: "rule-preview", id: previewID });
  const warn = h("p", { class: "rule-warn", hidden: true });
  // A rule for a call marked risky needs the person's explicit word.
  const why = risks(q);
  const confirmID = uid("rule");
  const confirm = h("input", { type: "checkbox", id: confirmID, class: "rule-risk-confirm", "aria-describedby": `${confirmID}-err` });
  const confirmErr = h("p", { class: "field-error", id: `${confirmID}-err`, role: "alert", hidden: true });
  const confirmField = why.length === 0 ? null : h("div", { class: "field rule-risk" },
    h("label", { class: "check", for: confirmID }, confirm,
      ` I understand: this call is marked risky (${why.join("; ")}), and the rule lets calls like it run without asking anyone.`),
    confirmErr);
  confirm.addEventListener("change", () => { confirmErr.hidden = true; confirmErr.textContent = ""; });

  const el = h("div", { class: "action-panel panel-always", role: "group", "aria-labelledby": `${previewID}-t`, hidden: true },
    h("p", { class: "panel-title", id: `${previewID}-t`, text: "Approve, and always allow calls like this" }),
    h("p", { class: "field-hint" }, "From now on, ", h("code", { class: "action-chip", text: name }),
      " calls from ", h("strong", { text: agentText(q.source_agent) }), " that match are approved at once, without asking anyone. Rules are listed under Rules in the top bar, where they can be revoked."),
    h("div", { class: "rule-fields" }, kind.el, h("div", { class: "rule-match" }, arg.el, valueField), expiry.el, scopeField),
    h("div", { class: "rule-summary" }, h("span", { class: "rule-summary-label", text: "Rule" }), preview, warn),
    confirmField);

  // suggest fills the value for the chosen kind and argument.
  function suggest() {
    const k = kind.control.value;
    const a = arg.control.value;
    const v = args[a];
    if (k === "prefix") value.value = typeof v === "string" ? firstWords(v) : "";
    else if (k === "command") value.value = typeof v === "string" && !shellControl(v) ? v : "";
    else if (k === "glob") value.value = typeof v === "string" ? dirGlob(v) : "";
    else if (k === "equals") value.value = typeof v === "string" ? v : JSON.stringify(v);
  }

  // layout shows the argument and value for a kind, with what they mean.
  function layout() {
    const k = kind.control.value;
    const pool = k === "prefix" || k === "command" || k === "glob" ? stringKeys : keys;
    for (const o of arg.control.options) o.hidden = o.disabled = !pool.includes(o.value);
    if (!pool.includes(arg.control.value) && pool.length > 0) arg.control.value = pool[0];
    arg.el.parentElement.hidden = k === "any";
    valueLabel.textContent = { prefix: "Starts with", command: "Command", glob: "Path pattern", equals: "Is exactly" }[k] || "";
    valueHint.textContent = {
      prefix: "The command itself, or it followed by any further arguments. A command with ; & | > < $ ` * or a line break never matches.",
      command: "Only this command, with no further arguments (spacing and quoting aside). A command with ; & | > < $ ` * or a line break never matches.",
      glob: "** is any number of folders, * any name. A path with .. never matches.",
      equals: typeof args[arg.control.value] === "string" ? "This exact text." : "This JSON value.",
    }[k] || "";
  }

  // match is the rule's match; for all agents, on the field of the
  // action's input that holds what the chosen argument holds (a Bash
  // command's "command" is a shell input's "command", a Write's
  // "file_path" a file.write input's "path").
  function match() {
    const m = argMatch();
    if (!m.ok || !scope.checked || m.match === null) return m;
    const want = JSON.stringify(args[m.match.arg]);
    const field = Object.keys(input).find((f) => JSON.stringify(input[f]) === want);
    if (!field) return { ok: false, error: `A rule for all agents matches what every ${kindText(actionKind)} has; ${m.match.arg} is not part of it. Choose another argument, or every call.` };
    return { ok: true, match: { ...m.match, arg: field } };
  }

  function argMatch() {
    const k = kind.control.value;
    if (k === "any") return { ok: true, match: null };
    const a = arg.control.value;
    const t = value.value;
    if (k === "equals") {
      if (typeof args[a] === "string") return { ok: true, match: { arg: a, equals: t } };
      try {
        return { ok: true, match: { arg: a, equals: JSON.parse(t) } };
      } catch {
        return { ok: false, error: "Enter a JSON value, such as 42 or true." };
      }
    }
    const v = t.trim();
    if (v === "") return { ok: false, error: { prefix: "Enter the start of the command.", command: "Enter the command." }[k] || "Enter a path pattern." };
    if ((k === "prefix" || k === "command") && shellControl(v)) return { ok: false, error: "A command rule cannot hold ; & | > < $ ` * or a line break: commands that hold them never match." };
    return { ok: true, match: k === "glob" ? { arg: a, glob: v } : { arg: a, [k]: v } };
  }

  function update() {
    const m = match();
    const ttl = Number(expiry.control.value);
    const until = ttl ? `for ${EXPIRIES.find(([s]) => s === ttl)[1].slice(3)}` : "until revoked";
    const what = scope.checked ? `every ${kindText(actionKind)} from all your agents` : `${name} from ${agentText(q.source_agent)}`;
    preview.textContent = m.ok ? `Allow ${what} ${matchText(m.match)}, ${until}.` : "Not a rule yet: the match needs attention.";
    value.rows = Math.min(6, Math.max(1, value.value.split("\n").length));
    const broad = m.ok && (matchKind(m.match) === "any" || ["**", "/**", "*"].includes(m.match.glob));
    const further = m.ok && matchKind(m.match) === "prefix";
    warn.hidden = !broad && !further;
    warn.textContent = broad
      ? `Every ${name} call from ${agentText(q.source_agent)}${matchKind(m.match) === "any" ? "" : " on any path"} will run without asking.`
      : further
        ? `Any further arguments are allowed too, such as “${m.match.prefix} --output=FILE” or “-c key=value”, which some programs use to write files or run commands. To allow only this command, choose “When a command is exactly”.`
        : "";
  }

  function setError(msg) {
    valueErr.textContent = msg;
    valueErr.hidden = !msg;
    if (msg) value.setAttribute("aria-invalid", "true");
    else value.removeAttribute("aria-invalid");
  }

  // The suggestion.
  const first = suggested;
  kind.control.value = first ? matchKind(first) : "any";
  if (first) arg.control.value = first.arg;
  else if (stringKeys.length > 0) arg.control.value = stringKeys[0];
  layout();
  expiry.control.value = String(DEFAULT_EXPIRY);
  if (first) value.value = first.prefix ?? first.command ?? first.glob ?? (typeof first.equals === "string" ? first.equals : JSON.stringify(first.equals));
  else suggest();
  update();

  kind.control.addEventListener("change", () => {
    layout();
    suggest();
    setError("");
    update();
  });
  arg.control.addEventListener("change", () => {
    suggest();
    setError("");
    update();
  });
  // A prefix or a pattern is one line: Enter adds none.
  value.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.ctrlKey && !e.metaKey && kind.control.value !== "equals") e.preventDefault();
  });
  value.addEventListener("input", () => {
    setError("");
    update();
  });
  expiry.control.addEventListener("change", update);
  scope.addEventListener("change", () => {
    setError("");
    update();
  });

  return {
    el,
    focus: () => kind.control.focus(),
    read() {
      setError("");
      const m = match();
      if (!m.ok) {
        setError(m.error);
        return { ok: false, message: "The rule's match needs attention.", first: value };
      }
      if (confirmField && !confirm.checked) {
        confirmErr.textContent = "Tick the box to confirm: this call is marked risky.";
        confirmErr.hidden = false;
        return { ok: false, message: "This call is marked risky: confirm the rule first.", first: confirm };
      }
      const always = { match: m.match };
      // The server refuses a rule for a risky call unless it was confirmed.
      if (confirmField) always.confirm_risky = true;
      if (scope.checked) always.scope = "all_agents";
      const ttl = Number(expiry.control.value);
      if (ttl) always.ttl_seconds = ttl;
      return { ok: true, value: { decision: "approve", always } };
    },
    parse: (message) => [{ path: "", message }],
    showErrors(list) {
      setError(list.map((e) => e.message).join(" "));
      (kind.control.value === "any" ? kind.control : value).focus();
      return [];
    },
    describedBy: previewID,
  };
}
