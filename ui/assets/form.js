// A form rendered from a JSON Schema object, with client-side validation
// that mirrors what the server checks (which still has the last word).
//
// Handled: properties of type string (enum → select; format date,
// date-time, time, email, uri → matching inputs; minLength, maxLength,
// pattern), number and integer (minimum, maximum, exclusive bounds,
// multipleOf), boolean (checkbox), arrays of enum values (checkboxes) or of
// plain strings/numbers (one per line), nested objects (fieldsets).
// title and description become the label and the hint, required fields
// are marked, and defaults (the schema's, or the interaction's
// default_response) are filled in. Anything else is edited as JSON.

import { h, uid } from "./dom.js";

// buildSchemaForm returns {el, read(), peek(), showErrors(list),
// clearErrors()}.
// read() returns {ok, value, first} where first is the first invalid
// control; showErrors takes [{path, message}] (JSON pointers) and returns
// the messages no field could show.
export function buildSchemaForm(schema, defaults) {
  const fields = new Map(); // JSON pointer → field
  const ctx = { fields, base: uid("f") };
  const root = objectNode(schema || {}, "", "", true, defaults, ctx, true);
  const hasRequired = [...fields.values()].some((f) => f.required);
  const el = h("div", { class: "schema-form" },
    hasRequired ? h("p", { class: "form-note" }, h("span", { class: "req", "aria-hidden": "true", text: "*" }), " Required") : null,
    root.el);

  function clearErrors() {
    for (const f of fields.values()) f.setError("");
  }
  return {
    el,
    read() {
      clearErrors();
      const r = root.read();
      let first = null;
      for (const e of r.errors) {
        const f = fields.get(e.path);
        if (f) {
          f.setError(e.message);
          first ??= f.focusable;
        }
      }
      return { ok: r.errors.length === 0, value: r.value ?? {}, first };
    },
    // peek reads the values as read() does, without marking any field.
    peek() {
      const r = root.read();
      return { ok: r.errors.length === 0, value: r.value ?? {} };
    },
    showErrors(list) {
      const rest = [];
      let first = null;
      for (const e of list) {
        const f = nearestField(fields, e.path);
        if (f) {
          f.setError(e.message);
          first ??= f.focusable;
        } else {
          rest.push(e.message);
        }
      }
      first?.focus();
      return rest;
    },
    clearErrors,
  };
}

// nearestField returns the field at path, or at its closest ancestor.
function nearestField(fields, path) {
  for (let p = path; p !== ""; p = p.slice(0, p.lastIndexOf("/"))) {
    const f = fields.get(p);
    if (f) return f;
  }
  return null;
}

// typeOf picks the schema's type (the first that is not null).
function typeOf(s) {
  let t = s.type;
  if (Array.isArray(t)) t = t.find((x) => x !== "null");
  if (t) return t;
  if (Array.isArray(s.enum) || "const" in s) return "enum";
  if (s.properties) return "object";
  return "";
}

// choices returns [{value, label}] for an enum or a oneOf/anyOf of consts.
function choices(s) {
  if (Array.isArray(s.enum)) return s.enum.map((v) => ({ value: v, label: String(v) }));
  const alts = s.oneOf || s.anyOf;
  if (Array.isArray(alts) && alts.length > 0 && alts.every((a) => a && "const" in a)) {
    return alts.map((a) => ({ value: a.const, label: a.title ?? String(a.const) }));
  }
  return null;
}

function humanize(name) {
  const s = String(name).replace(/[_-]+/g, " ").replace(/([a-z])([A-Z])/g, "$1 $2").trim();
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function ptr(name) {
  return "/" + String(name).replace(/~/g, "~0").replace(/\//g, "~1");
}

// field builds the label, hint and error around one control and registers
// it under path.
function field(ctx, { path, name, schema, required, control, id, check = false }) {
  const hintID = schema.description ? `${id}-hint` : null;
  const errID = `${id}-err`;
  const label = schema.title || humanize(name);
  const err = h("p", { class: "field-error", id: errID, hidden: true });
  control.setAttribute("aria-describedby", [hintID, errID].filter(Boolean).join(" "));
  if (required && !check) {
    control.setAttribute("aria-required", "true");
  }
  const req = required && !check ? h("span", { class: "req", "aria-hidden": "true", text: " *" }) : null;
  const hint = hintID ? h("p", { class: "field-hint", id: hintID, text: schema.description }) : null;
  const el = check
    ? h("div", { class: "field field-check", "data-path": path },
      h("label", { class: "check" }, control, h("span", { text: label })), hint, err)
    : h("div", { class: "field", "data-path": path },
      h("label", { class: "field-label", for: id, text: label }, req), hint, control, err);
  const f = {
    required,
    focusable: control,
    setError(msg) {
      err.textContent = msg;
      err.hidden = !msg;
      if (msg) control.setAttribute("aria-invalid", "true");
      else control.removeAttribute("aria-invalid");
    },
  };
  ctx.fields.set(path, f);
  return el;
}

// group builds a fieldset (checkbox groups, nested objects) registered
// under path, with the same error handling as a field.
function group(ctx, { path, name, schema, required, body, cls, legendless = false }) {
  const id = `${ctx.base}${path.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  const hintID = schema.description ? `${id}-hint` : null;
  const errID = `${id}-err`;
  const err = h("p", { class: "field-error", id: errID, hidden: true });
  const fs = h("fieldset", { class: `group ${cls || ""}`, "data-path": path, "aria-describedby": [hintID, errID].filter(Boolean).join(" ") },
    legendless ? null : h("legend", { class: "field-label" }, schema.title || humanize(name), required ? h("span", { class: "req", "aria-hidden": "true", text: " *" }) : null),
    hintID ? h("p", { class: "field-hint", id: hintID, text: schema.description }) : null,
    body, err);
  const focusable = fs.querySelector("input, select, textarea") || fs;
  ctx.fields.set(path || "/", {
    required,
    focusable,
    setError(msg) {
      err.textContent = msg;
      err.hidden = !msg;
    },
  });
  return fs;
}

// node builds the control for one schema and returns {el, read()}; read
// returns {present, value, errors:[{path, message}]}.
function node(schema, name, path, required, def, ctx) {
  const s = schema && typeof schema === "object" ? schema : {};
  if (def === undefined && "default" in s) def = s.default;
  const opts = choices(s);
  const t = typeOf(s);
  if (opts && t !== "array") return enumNode(s, name, path, required, def, ctx, opts);
  switch (t) {
    case "object": return objectNode(s, name, path, required, def, ctx, false);
    case "boolean": return booleanNode(s, name, path, def, ctx);
    case "number": case "integer": return numberNode(s, name, path, required, def, ctx, t === "integer");
    case "array": return arrayNode(s, name, path, required, def, ctx);
    case "string": return stringNode(s, name, path, required, def, ctx);
    default: return jsonNode(s, name, path, required, def, ctx);
  }
}

function controlID(ctx, path) {
  return `${ctx.base}${path.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

function objectNode(s, name, path, required, def, ctx, isRoot) {
  const req = new Set(Array.isArray(s.required) ? s.required : []);
  const defs = def && typeof def === "object" && !Array.isArray(def) ? def : {};
  const children = Object.entries(s.properties || {}).map(([k, sub]) => [k, node(sub, k, path + ptr(k), req.has(k), defs[k], ctx)]);
  const body = children.map(([, c]) => c.el);
  const el = isRoot
    ? h("div", { class: "fields" }, body)
    : group(ctx, { path, name, schema: s, required, body: h("div", { class: "fields" }, body), cls: "group-object" });
  return {
    el,
    read() {
      const value = {};
      const errors = [];
      let any = false;
      for (const [k, c] of children) {
        const r = c.read();
        errors.push(...r.errors);
        if (r.present) {
          value[k] = r.value;
          any = true;
        }
      }
      return { present: isRoot || any || required, value, errors };
    },
  };
}

function stringNode(s, name, path, required, def, ctx) {
  const id = controlID(ctx, path);
  const fmt = s.format;
  const types = { date: "date", "date-time": "datetime-local", time: "time", email: "email", uri: "url", url: "url" };
  let initial = typeof def === "string" ? def : "";
  // A value with line breaks (a shell script, say) needs a textarea: an
  // input would drop them.
  const long = (s.maxLength ?? 0) > 200 || s["x-multiline"] === true || (!fmt && (initial.includes("\n") || initial.length > 80));
  if (fmt === "date-time" && initial) initial = toLocalInput(initial);
  if (fmt === "time" && initial) initial = initial.replace(/(Z|[+-]\d\d:\d\d)$/, "").slice(0, 8);
  const control = long
    ? h("textarea", { id, name: path, rows: 3, class: "input", maxlength: s.maxLength, value: initial })
    : h("input", {
      id, name: path, class: "input", type: types[fmt] || "text", value: initial,
      maxlength: s.maxLength, step: fmt === "date-time" || fmt === "time" ? "1" : null,
      autocomplete: fmt === "email" ? "email" : "off", spellcheck: fmt ? "false" : null,
    });
  if (required) control.required = true;
  const el = field(ctx, { path, name, schema: s, required, control, id });
  return {
    el,
    read() {
      const v = control.value;
      const err = (message) => ({ present: v !== "", value: v, errors: [{ path, message }] });
      if (v === "") {
        if (control.validity.badInput) return err("Enter a complete value.");
        return required ? err("This field is required.") : { present: false, errors: [] };
      }
      if (control.validity.typeMismatch || control.validity.badInput) return err(control.validationMessage || "Enter a valid value.");
      const len = [...v].length;
      if (s.minLength !== undefined && len < s.minLength) return err(`Enter at least ${s.minLength} characters.`);
      if (s.maxLength !== undefined && len > s.maxLength) return err(`Enter at most ${s.maxLength} characters.`);
      if (s.pattern) {
        const re = compile(s.pattern);
        if (re && !re.test(v)) return err(`Use the expected format (${s.pattern}).`);
      }
      let value = v;
      if (fmt === "date-time") {
        const d = new Date(v);
        if (Number.isNaN(d.getTime())) return err("Enter a valid date and time.");
        value = d.toISOString();
      } else if (fmt === "time" && /^\d\d:\d\d$/.test(v)) {
        value = `${v}:00`;
      }
      return { present: true, value, errors: [] };
    },
  };
}

// compile compiles a JSON Schema pattern (ECMA-262, unanchored), with the
// u flag when the pattern allows it; a pattern this browser cannot compile
// is left to the server.
function compile(pattern) {
  for (const flags of ["u", ""]) {
    try {
      return new RegExp(pattern, flags);
    } catch {
      // try the next flags
    }
  }
  return null;
}

// toLocalInput turns an RFC 3339 time into a datetime-local value.
function toLocalInput(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  const local = new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString();
  return d.getSeconds() ? local.slice(0, 19) : local.slice(0, 16);
}

function numberNode(s, name, path, required, def, ctx, integer) {
  const id = controlID(ctx, path);
  const control = h("input", {
    id, name: path, class: "input input-number", type: "number", inputmode: integer ? "numeric" : "decimal",
    min: s.minimum ?? null, max: s.maximum ?? null,
    step: s.multipleOf ?? (integer ? 1 : "any"),
    value: typeof def === "number" ? String(def) : "",
  });
  if (required) control.required = true;
  const el = field(ctx, { path, name, schema: s, required, control, id });
  return {
    el,
    read() {
      const err = (message) => ({ present: true, value: null, errors: [{ path, message }] });
      if (control.value === "") {
        if (control.validity.badInput) return err("Enter a number.");
        return required ? err("This field is required.") : { present: false, errors: [] };
      }
      const n = Number(control.value);
      if (!Number.isFinite(n)) return err("Enter a number.");
      if (integer && !Number.isInteger(n)) return err("Enter a whole number.");
      if (s.minimum !== undefined && n < s.minimum) return err(`Enter ${s.minimum} or more.`);
      if (s.maximum !== undefined && n > s.maximum) return err(`Enter ${s.maximum} or less.`);
      if (typeof s.exclusiveMinimum === "number" && n <= s.exclusiveMinimum) return err(`Enter more than ${s.exclusiveMinimum}.`);
      if (typeof s.exclusiveMaximum === "number" && n >= s.exclusiveMaximum) return err(`Enter less than ${s.exclusiveMaximum}.`);
      if (s.multipleOf && Math.abs(n / s.multipleOf - Math.round(n / s.multipleOf)) > 1e-9) return err(`Enter a multiple of ${s.multipleOf}.`);
      return { present: true, value: n, errors: [] };
    },
  };
}

function booleanNode(s, name, path, def, ctx) {
  const id = controlID(ctx, path);
  const control = h("input", { id, name: path, type: "checkbox", checked: def === true });
  const el = field(ctx, { path, name, schema: s, required: false, control, id, check: true });
  return { el, read: () => ({ present: true, value: control.checked, errors: [] }) };
}

function enumNode(s, name, path, required, def, ctx, opts) {
  const id = controlID(ctx, path);
  const initial = opts.findIndex((o) => JSON.stringify(o.value) === JSON.stringify(def));
  const control = h("select", { id, name: path, class: "input" },
    required && initial >= 0 ? null : h("option", { value: "", text: required ? "Choose…" : "—" }),
    opts.map((o, i) => h("option", { value: String(i), text: o.label, selected: i === initial })));
  if (required) control.required = true;
  const el = field(ctx, { path, name, schema: s, required, control, id });
  return {
    el,
    read() {
      if (control.value === "") {
        return required ? { present: false, errors: [{ path, message: "Choose one." }] } : { present: false, errors: [] };
      }
      return { present: true, value: opts[Number(control.value)].value, errors: [] };
    },
  };
}

function arrayNode(s, name, path, required, def, ctx) {
  const items = s.items && typeof s.items === "object" ? s.items : {};
  const opts = choices(items);
  const bounds = (n) => {
    if (s.minItems !== undefined && n < s.minItems) return `Choose at least ${s.minItems}.`;
    if (s.maxItems !== undefined && n > s.maxItems) return `Choose at most ${s.maxItems}.`;
    return "";
  };
  if (opts) {
    const chosen = new Set((Array.isArray(def) ? def : []).map((v) => JSON.stringify(v)));
    const boxes = opts.map((o, i) => h("input", { type: "checkbox", name: `${path}#${i}`, value: String(i), checked: chosen.has(JSON.stringify(o.value)) }));
    const body = h("div", { class: "checks" }, boxes.map((b, i) => h("label", { class: "check" }, b, h("span", { text: opts[i].label }))));
    const el = group(ctx, { path, name, schema: s, required, body, cls: "group-checks" });
    return {
      el,
      read() {
        const value = opts.filter((_, i) => boxes[i].checked).map((o) => o.value);
        const msg = bounds(value.length);
        if (msg) return { present: true, value, errors: [{ path, message: msg }] };
        return { present: value.length > 0 || required, value, errors: [] };
      },
    };
  }
  const it = typeOf(items);
  if (it === "string" || it === "number" || it === "integer") {
    const id = controlID(ctx, path);
    const control = h("textarea", {
      id, name: path, class: "input", rows: 3,
      value: Array.isArray(def) ? def.join("\n") : "",
    });
    const sub = { ...s, description: [s.description, "One per line."].filter(Boolean).join(" ") };
    const el = field(ctx, { path, name, schema: sub, required, control, id });
    return {
      el,
      read() {
        const lines = control.value.split("\n").map((l) => l.trim()).filter(Boolean);
        if (lines.length === 0 && !required) return { present: false, errors: [] };
        const value = it === "string" ? lines : lines.map(Number);
        if (it !== "string" && value.some((n) => !Number.isFinite(n) || (it === "integer" && !Number.isInteger(n)))) {
          return { present: true, value, errors: [{ path, message: it === "integer" ? "Enter whole numbers, one per line." : "Enter numbers, one per line." }] };
        }
        const msg = bounds(value.length);
        return { present: true, value, errors: msg ? [{ path, message: msg.replace("Choose", "Enter") }] : [] };
      },
    };
  }
  return jsonNode(s, name, path, required, def, ctx);
}

// jsonNode edits a value the form cannot render as JSON text.
function jsonNode(s, name, path, required, def, ctx) {
  const id = controlID(ctx, path);
  const control = h("textarea", {
    id, name: path, class: "input input-mono", rows: 3, spellcheck: "false",
    value: def === undefined ? "" : JSON.stringify(def, null, 2),
  });
  const sub = { ...s, description: [s.description, "Enter JSON."].filter(Boolean).join(" ") };
  const el = field(ctx, { path, name, schema: sub, required, control, id });
  return {
    el,
    read() {
      if (control.value.trim() === "") {
        return required ? { present: false, errors: [{ path, message: "This field is required." }] } : { present: false, errors: [] };
      }
      try {
        return { present: true, value: JSON.parse(control.value), errors: [] };
      } catch {
        return { present: true, value: null, errors: [{ path, message: "Enter valid JSON." }] };
      }
    },
  };
}

// parseServerErrors splits the server's 422 message ("at /a: reason; at
// /b: reason") into [{path, message}]; a missing required property is
// reported at the property itself.
export function parseServerErrors(message) {
  const out = [];
  const re = /at (\/[^:]*): (.*?)(?=; at \/|; and \d+ more|$)/g;
  for (let m = re.exec(message); m; m = re.exec(message)) {
    let path = m[1] === "/" ? "" : m[1];
    let msg = m[2].trim();
    const missing = msg.match(/^missing propert(?:y|ies) '([^']+)'/);
    if (missing) {
      path += ptr(missing[1]);
      msg = "This field is required.";
    }
    out.push({ path, message: msg.charAt(0).toUpperCase() + msg.slice(1) });
  }
  return out;
}
