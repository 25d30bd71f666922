// A card's draft: what the person typed or chose in its answer but has
// not sent. It is kept in the card's model (so a card taken off the page
// far from the screen gets it back when it returns) and in the tab's
// session storage (so it outlives a reload or signing out).

// readDraft reads the named fields of form.
export function readDraft(form) {
  const d = {};
  for (const el of form.elements) {
    if (!el.name) continue;
    if (el.type === "radio") {
      if (el.checked) d[el.name] = el.value;
    } else if (el.type === "checkbox") {
      d[`${el.name}\u0000${el.value}`] = el.checked;
    } else {
      d[el.name] = el.value;
    }
  }
  return d;
}

// writeDraft puts draft d back into the fields of form.
export function writeDraft(form, d) {
  if (!d || typeof d !== "object") return;
  for (const el of form.elements) {
    if (!el.name) continue;
    if (el.type === "radio") {
      if (el.name in d) el.checked = d[el.name] === el.value;
    } else if (el.type === "checkbox") {
      const k = `${el.name}\u0000${el.value}`;
      if (k in d) el.checked = !!d[k];
    } else if (el.name in d && typeof d[el.name] === "string") {
      el.value = d[el.name];
    }
  }
}

function key(id) {
  return `hitl:draft:${id}`;
}

// storeDraft keeps the draft of interaction id in session storage.
export function storeDraft(id, d) {
  try {
    sessionStorage.setItem(key(id), JSON.stringify(d));
  } catch {
    // storage full or disabled: the draft lasts while the card is loaded
  }
}

// storedDraft is the draft of interaction id kept in session storage, or
// null.
export function storedDraft(id) {
  try {
    const d = JSON.parse(sessionStorage.getItem(key(id)) || "null");
    return d && typeof d === "object" ? d : null;
  } catch {
    return null;
  }
}

// forgetDraft drops the stored draft of interaction id.
export function forgetDraft(id) {
  try {
    sessionStorage.removeItem(key(id));
  } catch {
    // ignore
  }
}
