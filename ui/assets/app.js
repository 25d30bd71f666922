// hitl web inbox: the entry module. It wires the views, the live channel,
// the announcer and notifications together.

import { Inbox } from "./inbox.js";
import { History } from "./history.js";
import { connect } from "./live.js";
import { pendingIDs } from "./api.js";
import { setupNotifications } from "./notify.js";

const $ = (id) => document.getElementById(id);

// announce speaks a message through the polite live region; messages that
// come together are spoken together.
const announcer = $("announcer");
let queued = [];
let announceTimer = null;
function announce(text) {
  queued.push(text);
  clearTimeout(announceTimer);
  announceTimer = setTimeout(() => {
    announcer.textContent = "";
    const msg = queued.join(" ");
    queued = [];
    // A fresh text node after clearing makes screen readers read it again.
    requestAnimationFrame(() => { announcer.textContent = msg; });
  }, 120);
}

let view = "inbox";

const history = new History({
  list: $("history-list"),
  empty: $("history-empty"),
  error: $("history-error"),
  more: $("history-more"),
  status: $("history-status"),
});

const inboxHeading = $("inbox-title");
inboxHeading.tabIndex = -1;
$("history-title").tabIndex = -1;

const inbox = new Inbox({
  cards: $("cards"),
  empty: $("inbox-empty"),
  sub: $("inbox-sub"),
  count: $("inbox-count"),
  heading: inboxHeading,
}, {
  announce,
  visible: () => view === "inbox" && document.visibilityState === "visible",
  show: () => {
    if (view === "inbox") return;
    location.hash = "#inbox";
    route(false);
  },
  resolved: () => history.changed(),
  changed: (n) => { document.title = n > 0 ? `(${n}) hitl` : "hitl"; },
});

// Views: #inbox (default) and #history.
function route(fromUser) {
  const next = location.hash === "#history" ? "history" : "inbox";
  if (fromUser && next === view) return; // switched in code already
  view = next;
  $("view-inbox").hidden = view !== "inbox";
  $("view-history").hidden = view !== "history";
  for (const [id, v] of [["tab-inbox", "inbox"], ["tab-history", "history"]]) {
    if (v === view) $(id).setAttribute("aria-current", "page");
    else $(id).removeAttribute("aria-current");
  }
  if (view === "history") history.show();
  else history.hide();
  if (fromUser) $(view === "history" ? "history-title" : "inbox-title").focus({ preventScroll: true });
}
window.addEventListener("hashchange", () => route(true));
route(false);

setupNotifications($("notify-btn"), $("notify-state"));

// Connection state in the top bar.
const conn = $("conn");
const connText = $("conn-text");
let calmTimer = null;
let dropped = false;
function setConn(state, text) {
  conn.dataset.state = state;
  connText.textContent = text;
}

connect({
  onMessage: (msg) => inbox.handle(msg),
  async onState(state) {
    clearTimeout(calmTimer);
    switch (state) {
      case "connecting":
        setConn("connecting", "Connecting…");
        break;
      case "live":
        setConn("live", "Live");
        // The replay follows the open; once the list of pending questions
        // is read, an empty inbox really is empty.
        await pendingIDs();
        inbox.setReady();
        break;
      case "reconnecting":
        setConn("reconnecting", "Reconnecting…");
        if (!dropped) announce("Connection lost. Reconnecting…");
        dropped = true;
        break;
      case "reconnected":
        dropped = false;
        setConn("reconnected", "Reconnected");
        announce("Reconnected.");
        calmTimer = setTimeout(() => setConn("live", "Live"), 4000);
        inbox.setReady();
        await inbox.reconcile();
        history.changed();
        break;
    }
  },
});
