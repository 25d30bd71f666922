// Undo: a decision waits a few seconds (the server's undo window) before
// it is sent, so a slip of the keyboard can be taken back; the agent is
// told nothing until the window closes. A toast says what will be sent,
// with Undo (also u or Ctrl/⌘+Z). When the page goes away meanwhile, what
// is held is sent at once (a keepalive request), never dropped.

import { h } from "./dom.js";

let windowMs = 0;
const held = []; // {card, timer, send, now}
let toast = null;

// setUndoWindow sets the window, in seconds (0: answers go at once).
export function setUndoWindow(seconds) {
  windowMs = Math.max(0, Number(seconds) || 0) * 1000;
}

// undoWindow is the window in ms.
export function undoWindow() {
  return windowMs;
}

// hold keeps card's decision for the window, then runs send(); now()
// sends it at once as the page goes. text says what will be sent.
export function hold(card, text, send, now) {
  const entry = { card, send, now, text };
  entry.timer = setTimeout(() => release(entry), windowMs);
  held.push(entry);
  show();
}

// holding reports whether card's decision is held.
export function holding(card) {
  return held.some((e) => e.card === card);
}

// undoLast takes back the latest held decision; it returns its card, or
// null when nothing is held.
export function undoLast() {
  const entry = held.pop();
  if (!entry) return null;
  clearTimeout(entry.timer);
  show();
  return entry.card;
}

// drop forgets card's held decision without sending it (the question
// ended meanwhile).
export function drop(card) {
  const i = held.findIndex((e) => e.card === card);
  if (i < 0) return;
  clearTimeout(held[i].timer);
  held.splice(i, 1);
  show();
}

function release(entry) {
  const i = held.indexOf(entry);
  if (i < 0) return;
  held.splice(i, 1);
  show();
  entry.send();
}

// The page goes: what is held is sent now.
window.addEventListener("pagehide", () => {
  for (const e of held.splice(0)) {
    clearTimeout(e.timer);
    e.now();
  }
  show();
});

// show draws the toast for the latest held decision, or hides it.
function show() {
  if (!toast) {
    const button = h("button", { type: "button", class: "btn btn-secondary btn-small undo-button", onclick: () => toast.onundo?.() },
      h("span", { text: "Undo" }));
    toast = h("div", { class: "undo-toast", role: "status", hidden: true }, h("span", { class: "undo-text" }), button);
    document.body.append(toast);
  }
  const last = held.at(-1);
  toast.hidden = !last;
  toast.querySelector(".undo-text").textContent = last ? `${last.text}${held.length > 1 ? ` (and ${held.length - 1} more)` : ""} — sending in a moment.` : "";
}

// onUndo sets what the toast's Undo does.
export function onUndo(fn) {
  show();
  toast.onundo = fn;
}
