// The panels of an action card that ask for more than a click: the reason
// of a rejection, the reply of a respond, and the edited arguments. Each
// is {el, focus(), read(), parse(message), showErrors(list)}, where read
// returns {ok:true, value} or {ok:false, message, first}, and showErrors
// shows the server's refusal at the field and returns what it could not
// place.

import { h, uid } from "./dom.js";
import { buildSchemaForm, parseServerErrors } from "./form.js";
import { RawJSON } from "./api.js";
import { changesView } from "./argsview.js";

// panelShell is a panel: a group named by its title, with a hint.
function panelShell(cls, title, hint, ...body) {
  const id = uid("panel");
  return h("div", { class: `action-panel ${cls}`, role: "group", "aria-labelledby": `${id}-t`, hidden: true },
    h("p", { class: "panel-title", id: `${id}-t`, text: title }),
    hint ? h("p", { class: "field-hint", text: hint }) : null,
    body);
}

// textField is a labelled textarea with its hint and error.
function textField({ name, label, hint, required, rows = 3, mono = false, value = "" }) {
  const id = uid(name);
  const err = h("p", { class: "field-error", id: `${id}-err`, hidden: true });
  const hintEl = hint ? h("p", { class: "field-hint", id: `${id}-hint`, text: hint }) : null;
  const area = h("textarea", {
    id, name, rows, class: `input${mono ? " input-mono input-code" : ""}`, value, spellcheck: mono ? "false" : null,
    "aria-describedby": [hintEl ? `${id}-hint` : null, `${id}-err`].filter(Boolean).join(" "),
    "aria-required": required ? "true" : null,
    autocapitalize: mono ? "none" : null,
  });
  const el = h("div", { class: "field" },
    h("label", { class: "field-label", for: id, text: label },
      required ? h("span", { class: "req", "aria-hidden": "true", text: " *" }) : null),
    hintEl, area, err);
  return {
    el,
    area,
    setError(msg) {
      err.textContent = msg;
      err.hidden = !msg;
      if (msg) area.setAttribute("aria-invalid", "true");
      else area.removeAttribute("aria-invalid");
    },
  };
}

// messagePanel asks for a text: the reason of a rejection (decision
// "reject"), or the reply a respond sends instead of the action running.
export function messagePanel({ decision, title, label, hint, required, requiredText }) {
  const f = textField({ name: `${decision}-message`, label, hint, required });
  const el = panelShell(`panel-${decision}`, title, "", f.el);
  el.addEventListener("input", () => f.setError(""));
  return {
    el,
    focus: () => f.area.focus(),
    read() {
      f.setError("");
      const message = f.area.value.trim();
      if (required && message === "") {
        f.setError(requiredText);
        return { ok: false, message: requiredText, first: f.area };
      }
      return { ok: true, value: message ? { decision, message } : { decision } };
    },
    parse: (message) => [{ path: "", message }],
    showErrors(list) {
      f.setError(list.map((e) => e.message).join(" "));
      f.area.focus();
      return [];
    },
  };
}

// schemaOf returns args_schema as an object, or null.
function schemaOf(s) {
  if (typeof s === "string") {
    try {
      s = JSON.parse(s);
    } catch {
      return null;
    }
  }
  return s && typeof s === "object" && !Array.isArray(s) ? s : null;
}

// COMMAND_SCHEMA edits a shell command as text, on several lines.
const COMMAND_SCHEMA = {
  type: "object",
  properties: { command: { type: "string", title: "Command", minLength: 1, "x-multiline": true } },
  required: ["command"],
};

// editPanel edits an action's arguments: with the form args_schema
// describes (pre-filled with the proposed arguments; those the schema does
// not describe are kept as they are), a command as text when there is no
// schema, or as JSON when there is neither. Below, the changes from the
// proposal, kept up to date.
export function editPanel(q, args) {
  // A command without a schema (Bash and its like) is edited as text.
  const schema = schemaOf(q.args_schema) || (typeof args.command === "string" ? COMMAND_SCHEMA : null);
  const props = schema && schema.properties && typeof schema.properties === "object" ? Object.keys(schema.properties) : [];
  const form = props.length > 0 ? buildSchemaForm(schema, args) : null;
  const json = form ? null : textField({
    name: "edit-args", label: "Arguments (JSON)", mono: true, required: true,
    rows: Math.min(18, Math.max(4, JSON.stringify(args, null, 2).split("\n").length + 1)),
    value: JSON.stringify(args, null, 2),
    hint: schema ? "A JSON object; the server checks it against the action's schema." : "A JSON object, as the action will receive it.",
  });
  const changes = h("div", { class: "edit-changes-body" });
  const el = panelShell("panel-edit", "Edit the arguments", form ? "The action runs with what you approve here." : "",
    form ? form.el : json.el,
    h("div", { class: "edit-changes" }, h("p", { class: "field-label", text: "Changes" }), changes));

  // edited returns the edited arguments without marking any field:
  // {ok, value, text} (text: the JSON as typed).
  const kept = Object.fromEntries(Object.entries(args).filter(([k]) => !props.includes(k)));
  function edited() {
    if (form) {
      const r = form.peek();
      return { ok: r.ok, value: { ...kept, ...r.value } };
    }
    const text = json.area.value.trim();
    try {
      const v = JSON.parse(text);
      if (v && typeof v === "object" && !Array.isArray(v)) return { ok: true, value: v, text };
    } catch {
      // shown on submit
    }
    return { ok: false };
  }
  function refresh() {
    const r = edited();
    changes.replaceChildren(r.ok
      ? changesView(args, r.value)
      : h("p", { class: "args-none", text: form ? "Fill in the fields to see the changes." : "Type a JSON object to see the changes." }));
  }
  // At once, not after a pause: a preview that grew later would move the
  // buttons under a pointer on its way to them.
  el.addEventListener("input", () => {
    json?.setError("");
    refresh();
  });
  el.addEventListener("change", refresh);
  refresh();

  return {
    el,
    refresh,
    focus() {
      const first = form ? form.el.querySelector("input, select, textarea") : json.area;
      first?.focus();
    },
    read() {
      if (form) {
        const r = form.read();
        if (!r.ok) return { ok: false, message: "Some fields need attention.", first: r.first };
        return { ok: true, value: { decision: "edit", args: { ...kept, ...r.value } } };
      }
      json.setError("");
      const r = edited();
      if (!r.ok) {
        const msg = "Enter a JSON object, such as {\"command\": \"ls\"}.";
        json.setError(msg);
        return { ok: false, message: "The arguments are not a JSON object.", first: json.area };
      }
      // Sent as typed: the server sees exactly this (a repeated key is
      // refused there, where JSON.parse would keep the last one).
      return { ok: true, value: { decision: "edit", args: new RawJSON(r.text) } };
    },
    parse(message) {
      const list = form ? parseServerErrors(message) : [];
      return list.length > 0 ? list : [{ path: "", message }];
    },
    showErrors(list) {
      if (form) return form.showErrors(list);
      json.setError(list.map((e) => e.message).join(" "));
      json.area.focus();
      return [];
    },
  };
}
