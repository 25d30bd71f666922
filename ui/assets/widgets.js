// One answer widget per interaction type. Each returns
//   body:    the controls
//   actions: the buttons, primary last
//   read():  {ok:true, value} or {ok:false, message, first}
//   keyValue(target): what Ctrl/Cmd+Enter submits from target, or
//            undefined to use read()
//   showErrors(list): shows the server's field errors; returns the rest
//   key(target):     optional; handles Ctrl/Cmd+Enter on target itself
//            and returns true, or returns false to submit

import { h, icon } from "./dom.js";
import { buildSchemaForm, parseServerErrors } from "./form.js";
import { actionWidget } from "./action.js";

// buildWidget returns the widget for q; submit(value?) answers the card;
// opts go to the action widget (actionWidget).
export function buildWidget(q, ids, submit, opts) {
  switch (q.interaction_type) {
    case "approval": return approval(q, submit);
    case "single_choice": return singleChoice(q, ids);
    case "multi_choice": return multiChoice(q, ids);
    case "form": return form(q);
    case "action": return actionWidget(q, submit, opts);
    case "handoff": return handoffReply(q, ids);
    default: return freeText(q, ids);
  }
}

function submitButton(label = "Submit") {
  return h("button", { type: "submit", class: "btn btn-primary" }, icon("check"), h("span", { text: label }));
}

function approval(q, submit) {
  const opts = q.options && q.options.length === 2 ? q.options : [{ key: "approve", label: "Approve" }, { key: "reject", label: "Reject" }];
  const yes = h("button", { type: "button", class: "btn btn-primary btn-approve", "data-answer": "true", onclick: () => submit(true) },
    icon("check"), h("span", { text: opts[0].label }));
  const no = h("button", { type: "button", class: "btn btn-secondary btn-reject", "data-answer": "false", onclick: () => submit(false) },
    icon("x"), h("span", { text: opts[1].label }));
  const described = opts.filter((o) => o.description);
  const body = described.length
    ? h("dl", { class: "option-notes" }, described.map((o) => [h("dt", { text: o.label }), h("dd", { text: o.description })]))
    : null;
  return {
    body,
    actions: [no, yes],
    read: () => ({ ok: false, message: `Choose “${opts[0].label}” or “${opts[1].label}”.`, first: yes }),
    keyValue(target) {
      if (target === yes) return true;
      if (target === no) return false;
      return undefined;
    },
    showErrors: (list) => list,
  };
}

// choiceList renders options as radios or checkboxes: pills when there are
// few, a list with descriptions otherwise.
function choiceList(q, ids, type, checked) {
  const opts = q.options || [];
  const pills = opts.length <= 5;
  const inputs = [];
  const items = opts.map((o) => {
    const input = h("input", { type, name: type === "radio" ? "choice" : "choices", value: o.key, checked: checked(o.key), class: "choice-input" });
    inputs.push(input);
    return h("label", { class: "choice" }, input,
      h("span", { class: "choice-box" },
        h("span", { class: "choice-label", text: o.label }),
        // The pre-selected default is marked as such.
        checked(o.key) ? h("span", { class: "choice-default", text: "default" }) : null,
        o.description ? h("span", { class: "choice-desc", text: o.description }) : null));
  });
  const group = h("div", {
    class: `choices ${pills ? "choices-pills" : "choices-list"}`,
    role: type === "radio" ? "radiogroup" : "group",
    "aria-labelledby": ids.question,
  }, items);
  return { group, inputs };
}

function singleChoice(q, ids) {
  const def = typeof q.default_response === "string" ? q.default_response : null;
  const { group, inputs } = choiceList(q, ids, "radio", (k) => k === def);
  return {
    body: group,
    actions: [submitButton()],
    read() {
      const c = inputs.find((i) => i.checked);
      return c ? { ok: true, value: c.value } : { ok: false, message: "Choose an option.", first: inputs[0] };
    },
    keyValue: () => undefined,
    showErrors: (list) => list,
  };
}

function multiChoice(q, ids) {
  const def = new Set(Array.isArray(q.default_response) ? q.default_response : []);
  const { group, inputs } = choiceList(q, ids, "checkbox", (k) => def.has(k));
  return {
    body: group,
    actions: [submitButton()],
    read: () => ({ ok: true, value: inputs.filter((i) => i.checked).map((i) => i.value) }),
    keyValue: () => undefined,
    showErrors: (list) => list,
  };
}

function freeText(q, ids) {
  const placeholder = typeof q.default_response === "string" && q.default_response !== "" ? q.default_response : "Type your answer…";
  const area = h("textarea", {
    class: "input answer-text", name: "text", rows: 3, placeholder,
    "aria-labelledby": ids.question, "aria-describedby": ids.error,
  });
  return {
    body: area,
    actions: [submitButton()],
    read() {
      if (area.value.trim() === "") return { ok: false, message: "Type an answer first.", first: area };
      return { ok: true, value: area.value };
    },
    keyValue: () => undefined,
    showErrors: (list) => list,
  };
}

// handoffReply is the reply box of a conversation an agent handed over:
// the person's reply goes back to the agent, which resumes with it.
function handoffReply(q, ids) {
  const area = h("textarea", {
    class: "input answer-text handoff-reply", name: "reply", rows: 4,
    placeholder: "Write your reply…",
    "aria-label": "Your reply", "aria-describedby": ids.error,
  });
  return {
    body: area,
    actions: [submitButton("Send reply")],
    hint: " to send",
    read() {
      if (area.value.trim() === "") return { ok: false, message: "Write a reply first.", first: area };
      return { ok: true, value: area.value };
    },
    keyValue: () => undefined,
    showErrors: (list) => list,
  };
}

function form(q) {
  let schema = q.form_schema;
  if (typeof schema === "string") {
    try {
      schema = JSON.parse(schema);
    } catch {
      schema = {};
    }
  }
  const def = q.default_response && typeof q.default_response === "object" ? q.default_response : undefined;
  const f = buildSchemaForm(schema || {}, def);
  return {
    body: f.el,
    actions: [submitButton()],
    read() {
      const r = f.read();
      if (!r.ok) return { ok: false, message: "Some fields need attention.", first: r.first };
      return { ok: true, value: r.value };
    },
    keyValue: () => undefined,
    showErrors(list) {
      return f.showErrors(list);
    },
    parse: parseServerErrors,
  };
}
