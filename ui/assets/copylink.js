// Copy link: every card and History row offers the address of its
// question's detail view (/i/{id}), copied with the clipboard API, or
// with the older copy command where that API is not available (an
// address that is not a secure context); if both fail the link is shown
// selected, for the person to copy.

import { h, icon } from "./dom.js";

// announce speaks a short confirmation; app.js sets it.
let announce = () => {};

// setCopyAnnouncer sets how "Link copied" is spoken.
export function setCopyAnnouncer(fn) {
  announce = fn;
}

// detailPath is the path of the detail view of interaction id.
export function detailPath(id) {
  return `/i/${encodeURIComponent(id)}`;
}

// detailURL is the full address of the detail view of interaction id.
export function detailURL(id) {
  return new URL(detailPath(id), location.origin).href;
}

// copyLinkButton is a small "Copy link" button for interaction id, whose
// question names it for screen readers.
export function copyLinkButton(id, question) {
  const label = h("span", { class: "btn-label", text: "Copy link" });
  const btn = h("button", {
    type: "button",
    class: "btn btn-quiet btn-small btn-copy-link",
    "aria-label": `Copy link: ${brief(question)}`,
    "data-link": detailURL(id),
  }, icon("link"), label);
  let timer = null;
  btn.addEventListener("click", async () => {
    const url = detailURL(id);
    const ok = await copyText(url);
    clearTimeout(timer);
    if (ok) {
      label.textContent = "Link copied";
      btn.classList.add("is-copied");
      announce("Link copied.");
      timer = setTimeout(() => {
        label.textContent = "Copy link";
        btn.classList.remove("is-copied");
      }, 2500);
      return;
    }
    showSelectable(btn, url);
  });
  return btn;
}

// copyText puts text on the clipboard; it resolves to whether it did.
export async function copyText(text) {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // denied or unavailable: try the copy command
  }
  const area = h("textarea", { class: "copy-buffer", readonly: true, "aria-hidden": "true", tabindex: "-1" });
  area.value = text;
  const focused = document.activeElement;
  document.body.append(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch {
    ok = false;
  }
  area.remove();
  focused?.focus?.({ preventScroll: true });
  return ok;
}

// showSelectable shows url in a read-only field after btn, selected, when
// nothing could copy it.
function showSelectable(btn, url) {
  let field = btn.nextElementSibling;
  if (!field?.classList.contains("copy-fallback")) {
    field = h("input", { class: "input copy-fallback", type: "text", readonly: true, "aria-label": "Link to copy" });
    btn.after(field);
  }
  field.value = url;
  field.focus();
  field.select();
  announce("The link could not be copied by itself: it is selected, copy it with Ctrl+C.");
}

// brief is a question cut to a button name's length.
function brief(s) {
  const t = String(s).replace(/\s+/g, " ").trim();
  return t.length > 80 ? `${t.slice(0, 79)}…` : t;
}
