// The inbox's keyboard shortcuts: j/k move between cards, a/r approve or
// reject the focused approval (r asks to be pressed again, and so does a
// on an action marked risky), / focuses the search, ? shows the shortcuts. None fires while the person types in a
// field, in a dialog, or with a modifier held.

import { isTyping } from "./dom.js";
import { headline } from "./summary.js";
import { risks } from "./risk.js";
import { onUndo, undoLast } from "./undo.js";

// How long a first r (or a first a on a risky action) waits for the
// second, in ms.
const CONFIRM = 4000;

// setupKeys wires the shortcuts. inbox is the Inbox, triage the Triage
// bar, dialog the shortcuts dialog, active() whether the inbox is the
// view on screen, announce(text) speaks.
export function setupKeys({ inbox, triage, dialog, opener, active, announce }) {
  let rejecting = null; // the card whose reject awaits its confirmation
  let approving = null; // the risky card whose approval awaits its confirmation
  let rejectTimer = null;
  const clearReject = () => {
    rejecting?.article?.classList.remove("is-confirming");
    approving?.article?.classList.remove("is-confirming-approve");
    rejecting = approving = null;
    clearTimeout(rejectTimer);
  };
  opener.addEventListener("click", () => dialog.showModal());

  // Undo takes back the latest held decision (the toast's button, u,
  // Ctrl/⌘+Z); it reports whether there was one.
  const undo = () => {
    const card = undoLast();
    card?.unhold();
    return !!card;
  };
  onUndo(undo);

  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === "z" && !isTyping(e.target) && active()) {
      if (undo()) e.preventDefault();
      return;
    }
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || !active()) return;
    if (isTyping(e.target) || e.target.closest?.("dialog")) return;
    const card = inbox.focused();
    switch (e.key) {
      case "j":
      case "k":
        clearReject();
        inbox.move(e.key === "j" ? 1 : -1);
        break;
      case "u":
        if (!undo()) return;
        break;
      case "/":
        triage.focusSearch();
        break;
      case "?":
        dialog.showModal();
        break;
      case "a": {
        const btn = answerButton(card, ".btn-approve");
        if (!btn) {
          if (!explain(card, announce)) return;
          break;
        }
        const why = risks(card.q);
        if (why.length === 0 || approving === card) {
          clearReject();
          btn.click();
          break;
        }
        clearReject();
        approving = card;
        card.article.classList.add("is-confirming-approve");
        announce(`Risky: ${why.join("; ")}. Press a again to approve “${headline(card.q).slice(0, 80)}”.`);
        rejectTimer = setTimeout(clearReject, CONFIRM);
        break;
      }
      case "e": {
        // Edit opens with the focus in its first field.
        const btn = answerButton(card, ".btn-edit");
        if (!btn) {
          if (!explain(card, announce)) return;
          break;
        }
        clearReject();
        btn.click();
        swallowKey("e");
        break;
      }
      case "r": {
        const btn = answerButton(card, ".btn-reject");
        if (!btn) {
          if (!explain(card, announce)) return;
          break;
        }
        // An action's Reject opens its reason; an approval's asks for r
        // again.
        if (card.q.interaction_type === "action" || rejecting === card) {
          clearReject();
          btn.click();
          break;
        }
        clearReject();
        rejecting = card;
        card.article.classList.add("is-confirming");
        announce(`Press r again to reject “${headline(card.q).slice(0, 80)}”.`);
        rejectTimer = setTimeout(clearReject, CONFIRM);
        break;
      }
      case "Escape":
        if (!rejecting && !approving) return;
        announce(rejecting ? "Not rejected." : "Not approved.");
        clearReject();
        break;
      default:
        return;
    }
    e.preventDefault();
  });
}

// explain says why a key cannot act on card (someone else holds it, the
// person has voted), aloud and on the card; false when there is nothing
// to say (no card, or not one these keys answer).
function explain(card, announce) {
  if (!card || card.resolved || card.expired || !["approval", "action"].includes(card.q.interaction_type)) return false;
  const why = card.lockReason || (card.votedLock ? "You have voted on this question; the others' votes decide it." : card.busy ? "Your answer is being sent." : "");
  if (!why) return false;
  announce(why);
  card.showError(why);
  if (card.lockReason) card.error.dataset.claim = "1"; // cleared with the claim
  return true;
}

// swallowKey keeps the character of the key that opened a field from
// being typed into it (the field took the focus on keydown).
function swallowKey(key) {
  const stop = (e) => {
    if (e.key === key) e.preventDefault();
  };
  window.addEventListener("keypress", stop, { capture: true });
  window.addEventListener("keyup", () => window.removeEventListener("keypress", stop, { capture: true }), { capture: true, once: true });
}

// answerButton is card's enabled button matching sel, on an open
// approval or action.
function answerButton(card, sel) {
  if (!card || card.resolved || card.expired || card.busy) return null;
  if (!["approval", "action"].includes(card.q.interaction_type)) return null;
  const btn = card.fields.querySelector(`.actions-buttons ${sel}`);
  return btn && !btn.disabled && !card.fields.disabled ? btn : null;
}
