// Answers shown as a person reads them: a form's fields by the titles of
// its schema (not by raw keys), in the schema's order, with enum values
// by their titles and booleans as Yes/No; every other type as format.js
// shows it.

import { h } from "./dom.js";
import { valueNode } from "./format.js";

// answerNode renders an answer value for the interaction it answers.
export function answerNode(it, value) {
  if (it.interaction_type === "form" && value && typeof value === "object" && !Array.isArray(value)) {
    return fieldsNode(schemaOf(it.form_schema), value);
  }
  return valueNode(it, value);
}

function schemaOf(s) {
  if (typeof s === "string") {
    try {
      return JSON.parse(s);
    } catch {
      return {};
    }
  }
  return s && typeof s === "object" ? s : {};
}

// fieldsNode is an object's fields as a definition list: the schema's
// properties first, in its order, then any others by key.
function fieldsNode(schema, obj) {
  const props = schema.properties && typeof schema.properties === "object" ? schema.properties : {};
  const keys = [...Object.keys(props).filter((k) => k in obj), ...Object.keys(obj).filter((k) => !(k in props))];
  const dl = h("dl", { class: "kv form-answer" });
  for (const k of keys) {
    const sub = props[k] && typeof props[k] === "object" ? props[k] : {};
    const title = typeof sub.title === "string" && sub.title.trim() ? sub.title : k;
    dl.append(h("dt", { text: title, title: title === k ? null : k }), h("dd", {}, fieldValue(sub, obj[k])));
  }
  return dl;
}

// fieldValue renders one field's value by its subschema.
function fieldValue(schema, v) {
  if (v === null || v === undefined) return h("span", { class: "muted", text: "empty" });
  if (typeof v === "boolean") return h("span", { class: "text-value", text: v ? "Yes" : "No" });
  if (Array.isArray(v)) {
    const items = schema.items && typeof schema.items === "object" ? schema.items : {};
    if (v.length === 0) return h("span", { class: "muted", text: "none" });
    return h("span", { class: "text-value", text: v.map((x) => (typeof x === "object" && x !== null ? JSON.stringify(x) : enumTitle(items, x))).join(", ") });
  }
  if (typeof v === "object") return fieldsNode(schema, v);
  return h("span", { class: "text-value", text: enumTitle(schema, v) });
}

// enumTitle is the title a schema gives value (oneOf/anyOf entries with
// const and title), or the value itself.
function enumTitle(schema, value) {
  for (const list of [schema.oneOf, schema.anyOf]) {
    if (!Array.isArray(list)) continue;
    const hit = list.find((s) => s && typeof s === "object" && s.const === value && typeof s.title === "string");
    if (hit) return hit.title;
  }
  return String(value);
}
