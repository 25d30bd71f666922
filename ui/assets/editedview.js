// What ran after "Edit and approve": the edited arguments as the agent
// will use them, and the difference from what it proposed. The card, the
// detail view and History show it in place of the proposed call.

import { h } from "./dom.js";
import { actionArgs, argsView, changesView } from "./argsview.js";
import { decisionOf } from "./decision.js";

// editedArgs is the arguments an answer approved after an edit (an
// object), or null when the answer is not an edit.
export function editedArgs(value) {
  if (decisionOf(value) !== "edit" || !value.args || typeof value.args !== "object" || Array.isArray(value.args)) return null;
  return value.args;
}

// editedView shows the action as approved with edited arguments, and the
// changes from the proposed ones.
export function editedView(action, edited) {
  return h("div", { class: "action-view edited-view" },
    h("p", { class: "edited-title", text: "Approved with these arguments" }),
    argsView({ name: action?.name || "", args: edited }),
    h("p", { class: "edited-title", text: "Changed from what the agent proposed" }),
    changesView(actionArgs(action), edited));
}

// proposedView shows the arguments the agent proposed, for an ended
// action whose card is gone (the detail view).
export function proposedView(action) {
  return h("div", { class: "action-view" },
    h("p", { class: "edited-title", text: "Proposed by the agent" }),
    argsView(action));
}
