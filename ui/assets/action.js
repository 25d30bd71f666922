// The answer widget of an action: a tool call awaiting review. Buttons for
// the decisions the agent allows — Approve, Edit, Reject, Respond — and
// Always allow… (approve, and make a rule). Reject, Respond, Edit and
// Always allow… open a panel (the reason, the reply, the arguments, the
// rule) whose field takes the focus; Escape or Cancel closes it. Ctrl/⌘+
// Enter submits the current choice: approve, or the open panel.
//
// It has the shape of every widget (widgets.js), plus view (the action,
// shown above the answer and after it), hint (what Ctrl/⌘+Enter does) and
// sentText(value) (the outcome of this page's own answer).

import { h, icon } from "./dom.js";
import { RawJSON } from "./api.js";
import { actionArgs, argsView, changedKeys } from "./argsview.js";
import { editPanel, messagePanel } from "./actionpanels.js";
import { rulePanel } from "./rulepanel.js";
import { DECISIONS, fieldsText } from "./decision.js";
import { visibleText } from "./codeview.js";

// What Ctrl/⌘+Enter does, by open panel.
const HINTS = { reject: "to reject", respond: "to send", edit: "to approve the edit", always: "to approve and save the rule" };

function button(cls, iconName, label, onclick, attrs = {}) {
  return h("button", { type: "button", class: `btn ${cls}`, onclick, ...attrs }, icon(iconName), h("span", { text: label }));
}

// actionWidget returns the widget for the action q asks about; submit
// answers the card. rules: false leaves out Always allow… (a page that
// answers but makes no rules, such as the embedded prompt).
export function actionWidget(q, submit, { rules = true } = {}) {
  const action = q.action || { name: "", args: {} };
  const args = actionArgs(action);
  const allowed = new Set(Array.isArray(q.decisions) && q.decisions.length > 0 ? q.decisions : DECISIONS);
  const canAlways = rules && allowed.has("approve") && !!q.source_agent && q.source_agent !== "*";

  const panels = {};
  if (allowed.has("reject")) {
    panels.reject = messagePanel({
      decision: "reject",
      title: "Reject",
      label: q.reject_requires_message ? "Reason (required)" : "Reason (optional)",
      hint: `The agent reads it, and does not run ${action.name}.`,
      required: !!q.reject_requires_message,
      requiredText: "Say why: the agent needs a reason to reject this action.",
    });
  }
  if (allowed.has("respond")) {
    panels.respond = messagePanel({
      decision: "respond",
      title: "Respond instead",
      label: "Your reply",
      hint: `${action.name} does not run; the agent gets your reply instead.`,
      required: true,
      requiredText: "Type a reply first.",
    });
  }
  if (allowed.has("edit")) panels.edit = editPanel(q, args);
  if (canAlways) panels.always = rulePanel(q, args);

  let mode = "";
  let opener = null;
  const hint = h("span", { class: "kbd-hint-text" });
  const slot = h("span", { class: "action-buttons" });

  const main = [
    canAlways ? button("btn-quiet btn-always", "repeat", "Always allow…", (e) => open("always", e.currentTarget)) : null,
    panels.respond ? button("btn-secondary btn-respond", "reply", "Respond", (e) => open("respond", e.currentTarget)) : null,
    panels.edit ? button("btn-secondary btn-edit", "edit", "Edit", (e) => open("edit", e.currentTarget)) : null,
    panels.reject ? button("btn-secondary btn-reject", "x", "Reject", (e) => open("reject", e.currentTarget)) : null,
    allowed.has("approve") ? button("btn-primary btn-approve", "check", "Approve", () => submit({ decision: "approve" })) : null,
  ].filter(Boolean);

  const submits = {
    reject: ["btn-danger", "x", "Reject"],
    respond: ["btn-primary", "send", "Send reply"],
    edit: ["btn-primary", "check", "Approve edited"],
    always: ["btn-primary", "check", "Approve and always allow"],
  };

  // footer returns the buttons of a mode: the decisions, or a panel's
  // Cancel and submit.
  function footer(m) {
    if (m === "") return main;
    const [cls, ic, label] = submits[m];
    return [
      button("btn-quiet btn-cancel", "x", "Cancel", () => close()),
      button(`${cls} btn-submit`, ic, label, () => submit(), { "data-mode": m, "aria-describedby": panels[m].describedBy || null }),
    ];
  }

  function show(m) {
    mode = m;
    for (const [k, p] of Object.entries(panels)) p.el.hidden = k !== m;
    slot.replaceChildren(...footer(m));
    // The decisions are buttons; the hint is for the panels (empty, it
    // hides).
    hint.textContent = m ? ` ${HINTS[m]}` : "";
    body.dataset.mode = m || "decide";
  }

  function open(m, from) {
    opener = from || null;
    show(m);
    if (m === "edit") panels.edit.refresh();
    panels[m].focus();
  }

  function close() {
    const back = opener;
    opener = null;
    show("");
    // The button that opened the panel is on the page again.
    (back && main.includes(back) ? back : main[0])?.focus();
  }

  // Escape closes the open panel, from its fields or its buttons; Enter
  // alone in a field never sends an action's answer.
  const onkeydown = (e) => {
    if (e.key === "Escape" && mode !== "") {
      e.preventDefault();
      e.stopPropagation();
      close();
    } else if (e.key === "Enter" && !e.ctrlKey && !e.metaKey && e.target.tagName === "INPUT") {
      e.preventDefault();
    }
  };
  slot.addEventListener("keydown", onkeydown);
  const body = h("div", { class: "action-answer", onkeydown }, Object.values(panels).map((p) => p.el));
  show("");

  return {
    body,
    actions: [slot],
    hint,
    view: actionView(action),
    read() {
      if (mode !== "") return panels[mode].read();
      if (allowed.has("approve")) return { ok: true, value: { decision: "approve" } };
      return { ok: false, message: "Choose what to do with this action.", first: main[0] };
    },
    // Ctrl/⌘+Enter on Reject, Edit, Respond or Always allow… opens that
    // panel: it never approves what the person is pointing away from.
    key(target) {
      const b = target?.closest?.("button");
      if (!b || !main.includes(b) || b.classList.contains("btn-approve")) return false;
      b.click();
      return true;
    },
    keyValue: () => undefined,
    parse: (message) => (mode !== "" ? panels[mode].parse(message) : []),
    showErrors: (list) => (mode !== "" ? panels[mode].showErrors(list) : list.map((e) => e.message)),
    sentText: (value) => sentText(value, args),
    // closed is whether no panel is open (the card's answer is the buttons).
    closed: () => mode === "",
  };
}

// actionView shows the action: its description and its arguments.
function actionView(action) {
  return h("div", { class: "action-view" },
    action.description ? h("p", { class: "action-desc" }, visibleText(action.description)) : null,
    argsView(action));
}

// sentText says what this page's own answer decided, until the server
// says by whom.
function sentText(v, args) {
  switch (v?.decision) {
    case "approve":
      return v.always ? "Approved, and the rule is saved." : "Approved.";
    case "edit": {
      let edited = v.args;
      if (edited instanceof RawJSON) {
        try {
          edited = JSON.parse(edited.text);
        } catch {
          edited = {};
        }
      }
      const keys = changedKeys(args, edited || {});
      return keys.length > 0 ? `✏️ Edited and approved: ${fieldsText(keys)} changed.` : "Approved (the edit changed nothing).";
    }
    case "reject":
      return v.message ? `Rejected: ${v.message}` : "Rejected.";
    case "respond":
      return `Answered instead: ${v.message}`;
  }
  return "Answer sent.";
}
