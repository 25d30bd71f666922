// Small DOM helpers. Nothing in the inbox ever assigns HTML from a string:
// every element is created here and every text is a text node.

const PROPS = new Set(["value", "checked", "disabled", "selected", "defaultChecked", "defaultValue"]);

// h creates an element. props: class, text, on<event> handlers, a few DOM
// properties (value, checked, disabled, …), anything else as an attribute
// (true → present, false/null/undefined → absent). Children are nodes or
// strings (as text) and may be nested arrays; null is skipped.
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (PROPS.has(k)) el[k] = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

// append adds children (nodes, strings, nested arrays; null skipped).
export function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// speak fills a live region with children (as append takes them): it is
// emptied first and filled in the next frame, so that a message said twice
// is announced twice. Nothing to say leaves it empty.
export function speak(el, ...children) {
  const n = (Number(el.dataset.said) || 0) + 1;
  el.dataset.said = String(n);
  el.replaceChildren();
  if (children.every((c) => c === null || c === undefined || c === false || c === "")) return;
  requestAnimationFrame(() => {
    if (el.dataset.said === String(n)) append(el, children);
  });
}

// svg creates an inline icon from path data (no markup strings).
export function icon(name) {
  const NS = "http://www.w3.org/2000/svg";
  const el = document.createElementNS(NS, "svg");
  el.setAttribute("viewBox", "0 0 24 24");
  el.setAttribute("aria-hidden", "true");
  el.setAttribute("focusable", "false");
  el.setAttribute("class", `icon icon-${name}`);
  for (const d of ICONS[name] || []) {
    const p = document.createElementNS(NS, "path");
    p.setAttribute("d", d);
    el.append(p);
  }
  return el;
}

const ICONS = {
  clock: ["M12 7v5l3 2", "M21 12a9 9 0 1 1-18 0 9 9 0 0 1 18 0z"],
  check: ["M5 12.5l4.5 4.5L19 7.5"],
  x: ["M6 6l12 12", "M18 6L6 18"],
  bell: ["M6 16V11a6 6 0 1 1 12 0v5l1.5 2h-15z", "M10 20.5a2 2 0 0 0 4 0"],
  retry: ["M4 12a8 8 0 0 1 14-5.3L20 9", "M20 4v5h-5", "M20 12a8 8 0 0 1-14 5.3L4 15", "M4 20v-5h5"],
  hash: ["M10 4L8 20", "M16 4l-2 16", "M4.5 9h15", "M4 15h15"],
  // Slack's pinwheel, drawn in strokes: four bars and four dots.
  slack: ["M14.5 3.5v5", "M20 9.5h.01", "M15.5 14.5h5", "M14.5 20h.01", "M9.5 15.5v5", "M4 14.5h.01", "M3.5 9.5h5", "M9.5 4h.01"],
  lock: ["M8 11V8a4 4 0 0 1 8 0v3", "M6 11h12v9H6z"],
  logout: ["M10 4H6a1 1 0 0 0-1 1v14a1 1 0 0 0 1 1h4", "M15 16l4-4-4-4", "M19 12H10"],
  alert: ["M12 8v5", "M12 16.5v.01", "M21 12a9 9 0 1 1-18 0 9 9 0 0 1 18 0z"],
  send: ["M4 12l16-8-6 16-2.5-6.5z", "M11.5 13.5L20 4"],
  edit: ["M4 20h4L18.5 9.5a2.1 2.1 0 0 0-3-3L5 17v3z", "M13.5 8.5l2 2"],
  reply: ["M10 7L5 12l5 5", "M5 12h9a5 5 0 0 1 5 5v2"],
  repeat: ["M17 3l3 3-3 3", "M4 11V9a3 3 0 0 1 3-3h13", "M7 21l-3-3 3-3", "M20 13v2a3 3 0 0 1-3 3H4"],
  shield: ["M12 3l7 3v5.5c0 4.2-2.9 7.8-7 9.5-4.1-1.7-7-5.3-7-9.5V6z", "M9 12l2 2 4-4"],
  terminal: ["M5 8l4 4-4 4", "M12 16h7"],
  file: ["M14 3H7a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h10a2 2 0 0 0 2-2V8z", "M14 3v5h5"],
  link: ["M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1", "M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1"],
  back: ["M15 18l-6-6 6-6"],
  user: ["M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8z", "M4 20a8 8 0 0 1 16 0"],
};

let seq = 0;
// uid returns an id unique in the page.
export function uid(prefix) {
  seq += 1;
  return `${prefix}-${seq}`;
}

// sleep resolves after ms.
export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// isTyping reports whether el is a control a person types into.
export function isTyping(el) {
  if (!el || el === document.body) return false;
  if (el.isContentEditable) return true;
  if (el.tagName === "TEXTAREA" || el.tagName === "SELECT") return true;
  if (el.tagName === "INPUT") {
    return !["button", "submit", "reset", "checkbox", "radio", "range", "color", "file", "image"].includes(el.type);
  }
  return false;
}
