// hitl web inbox: the entry module. It asks the server who is signed in,
// shows the sign-in view or the inbox, and wires the views, the live
// channel, the announcer, notifications, the rules and the Slack settings
// together.

import { Inbox } from "./inbox.js";
import { Triage } from "./triage.js";
import { setupKeys } from "./keys.js";
import { PAGE } from "./inboxpages.js";
import { History } from "./history.js";
import { DetailView } from "./detail.js";
import { detailPath, setCopyAnnouncer } from "./copylink.js";
import { connect } from "./live.js";
import { onUnauthorized } from "./api.js";
import { setupNotifications } from "./notify.js";
import { SignIn, logout, me } from "./session.js";
import { SlackSettings } from "./slack.js";
import { PushControl } from "./push.js";
import { EmailSettings } from "./emailsettings.js";
import { RulesView } from "./rules.js";
import { setMe } from "./progress.js";
import { icon, sleep } from "./dom.js";
import { setViewer } from "./audience.js";
import { setUndoWindow } from "./undo.js";

const $ = (id) => document.getElementById(id);

// What the sign-in view says when a session ends by itself (expired,
// logged out in another tab, revoked by an admin).
const SESSION_ENDED = "Your session has ended. Sign in again to see your questions.";
// What it says when the page ran in local mode and the first user or
// token was created meanwhile.
const LOCAL_ENDED = "This server now has users, so it asks who you are. Sign in to go on.";

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

// The session: "unknown" while the page asks, "in" with the inbox on
// screen, "out" with the sign-in view (or a problem) on screen.
let session = "unknown";
let user = null; // GET /api/v1/auth/me's answer while signed in
let view = "inbox";

setCopyAnnouncer(announce);

const history = new History({
  list: $("history-list"),
  empty: $("history-empty"),
  error: $("history-error"),
  more: $("history-more"),
  sub: $("history-sub"),
  form: $("history-filters"),
  q: $("history-q"),
  status: $("history-status"),
  agent: $("history-agent"),
  type: $("history-type"),
  channel: $("history-channel"),
}, { announce });

const detail = new DetailView({ body: $("detail-body") }, { announce });

const inboxHeading = $("inbox-title");
inboxHeading.tabIndex = -1;
$("history-title").tabIndex = -1;

const triage = new Triage({
  bar: $("triage"),
  sort: $("triage-sort"),
  q: $("triage-q"),
  compact: $("triage-compact"),
  panes: $("triage-panes"),
  filtersBtn: $("triage-filters-btn"),
  filtersCount: $("triage-filters-count"),
  filters: $("triage-filters"),
  scope: $("triage-scope"),
  agents: $("triage-agents"),
  types: $("triage-types"),
}, { changed: (view, what) => inbox.viewChanged(view, what) });

const inbox = new Inbox({
  cards: $("cards"),
  empty: $("inbox-empty"),
  sub: $("inbox-sub"),
  count: $("inbox-count"),
  heading: inboxHeading,
  notice: $("inbox-notice"),
  more: $("cards-more"),
  pill: $("new-pill"),
  ended: $("ended"),
  panes: $("panes"),
  pane: $("pane"),
  paneEmpty: $("pane-empty"),
}, {
  announce,
  triage,
  visible: () => session === "in" && view === "inbox" && document.visibilityState === "visible",
  show: () => {
    if (view === "inbox") return;
    navigate("/#inbox", false);
  },
  resolved: () => history.changed(),
  changed: (n) => {
    // The detail view's title is its question's.
    if (session === "in" && view !== "detail") document.title = n > 0 ? `(${n}) hitl` : "hitl";
  },
});

setupKeys({
  inbox,
  triage,
  dialog: $("keys-dialog"),
  opener: $("triage-keys"),
  active: () => session === "in" && view === "inbox",
  announce,
});

// A link to one question (/?interaction=id, Slack's "Open in hitl") is
// followed once the first replay is in, after signing in if need be.
let link = new URLSearchParams(location.search).get("interaction");

// followLink opens the linked question and takes the parameter out of
// the address, so a reload does not open it again: a pending question in
// the inbox, any other (one that ended names itself and its outcome
// there) in the detail view.
function followLink(pending) {
  if (!link) return;
  const id = link;
  link = null;
  const url = new URL(location.href);
  url.searchParams.delete("interaction");
  if (pending && !pending.has(id)) {
    window.history.replaceState(window.history.state, "", detailPath(id));
    route(true);
    return;
  }
  window.history.replaceState(window.history.state, "", url);
  inbox.open(id, pending);
}

// Views, while signed in: /#inbox (default), /#history and /i/{id} (the
// detail view of one interaction).
let shownDetail = "";
function route(fromUser) {
  if (session !== "in") return;
  const m = /^\/i\/([^/]+)$/.exec(location.pathname);
  let id = "";
  if (m) {
    try {
      id = decodeURIComponent(m[1]);
    } catch {
      id = m[1];
    }
  }
  const next = id ? "detail" : location.hash === "#history" ? "history" : "inbox";
  if (fromUser && next === view && id === shownDetail) return; // switched in code already
  // The detail view's way back is to the list it was opened from.
  if (next === "detail" && (view === "history" || view === "inbox")) setBack(view);
  view = next;
  shownDetail = id;
  $("view-inbox").hidden = view !== "inbox";
  $("view-history").hidden = view !== "history";
  $("view-detail").hidden = view !== "detail";
  for (const [tab, v] of [["tab-inbox", "inbox"], ["tab-history", "history"]]) {
    if (v === view) $(tab).setAttribute("aria-current", "page");
    else $(tab).removeAttribute("aria-current");
  }
  if (view === "history") history.show();
  else history.hide();
  if (view === "detail") detail.show(id, fromUser);
  else {
    detail.hide();
    document.title = inbox.pending() > 0 ? `(${inbox.pending()}) hitl` : "hitl";
  }
  if (fromUser && view !== "detail") $(view === "history" ? "history-title" : "inbox-title").focus({ preventScroll: true });
}
window.addEventListener("hashchange", () => route(true));
window.addEventListener("popstate", () => route(true));

// setBack points the detail view's back link at the list it came from.
function setBack(from) {
  const back = $("detail-back");
  back.href = from === "history" ? "/#history" : "/#inbox";
  back.textContent = from === "history" ? "Back to History" : "Back to the inbox";
}

// navigate goes to an address of the inbox without loading the page
// again (the live channel stays open).
function navigate(href, fromUser = true) {
  const url = new URL(href, location.href);
  if (url.href !== location.href) window.history.pushState(null, "", url);
  route(fromUser);
}

// Links to the inbox's own views (the tabs, History's rows, the detail
// view's links) are followed in the page; a modified click (new tab)
// and every other link are left to the browser.
document.addEventListener("click", (e) => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = e.target.closest?.("a[href]");
  if (!a || a.target || a.hasAttribute("download") || session !== "in") return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !(url.pathname === "/" || /^\/i\/[^/]+$/.test(url.pathname))) return;
  e.preventDefault();
  navigate(url.href);
});

$("notify-btn").prepend(icon("bell"));
setupNotifications($("notify-btn"), $("notify-state"));

const slack = new SlackSettings($("slack-btn"), $("slack-dialog"), { announce });
const push = new PushControl($("topbar-end"), { announce });
const emailSettings = new EmailSettings($("topbar-end"), { announce });
const rules = new RulesView($("rules-btn"), $("rules-dialog"), { announce });

const signIn = new SignIn({
  view: $("view-login"),
  form: $("login-form"),
  username: $("login-username"),
  password: $("login-password"),
  submit: $("login-submit"),
  notice: $("login-notice"),
  error: $("login-error"),
  retry: $("login-retry"),
  help: $("login-help"),
  signOn: $("login-signon"),
}, {
  signedIn: (data) => {
    signedIn(data);
    inboxHeading.focus({ preventScroll: true });
    announce(`Signed in as ${data.name}.`);
  },
  retry: () => boot(),
});

$("sign-out").addEventListener("click", async () => {
  const r = await logout();
  if (!r.ok && r.status !== 401) {
    announce(`Could not sign out: ${r.status === 0 ? "the server could not be reached" : r.error?.message || "server error"}.`);
    return;
  }
  clearDrafts();
  signedOut("You have signed out.");
});

// Connection state in the top bar.
const conn = $("conn");
const connText = $("conn-text");
let calmTimer = null;
let dropped = false;
function setConn(state, text) {
  conn.dataset.state = state;
  connText.textContent = text;
}

// The live channel, open while signed in. liveGen tells the callbacks of
// a channel stopped by signing out from those of the current one.
let live = null;
let liveGen = 0;

function startLive() {
  const gen = ++liveGen;
  const current = () => gen === liveGen && session === "in";
  let replays = 0;
  live = connect({
    // The first page of pending questions in the triage bar's order; the
    // rest come on demand.
    params: { replay: "page", sort: triage.view.sort, limit: String(PAGE) },
    onMessage(msg) {
      if (!current()) return;
      inbox.handle(msg);
      detail.handle(msg);
      if (msg.type !== "hitl:replay_done") return;
      // Every pending card is on the page: a link can be followed, and
      // after a reconnect the history may have grown.
      if (replays++ === 0) followLink(Array.isArray(msg.pending) ? new Set(msg.pending) : null);
      else history.changed();
    },
    onState(state) {
      if (!current()) return;
      clearTimeout(calmTimer);
      switch (state) {
        case "connecting":
          setConn("connecting", "Connecting…");
          break;
        case "live":
          // The replay follows; hitl:replay_done ends it.
          setConn("live", "Live");
          break;
        case "reconnecting":
          setConn("reconnecting", "Reconnecting…");
          if (!dropped) announce("Connection lost. Reconnecting…");
          dropped = true;
          setDown(true);
          break;
        case "reconnected":
          dropped = false;
          setConn("reconnected", "Reconnected");
          announce("Reconnected.");
          setDown(false);
          inbox.online();
          calmTimer = setTimeout(() => setConn("live", "Live"), 4000);
          break;
      }
    },
    onClose({ code, opened }) {
      // The server ends a stream whose credentials ended with 1008, and
      // refuses the handshake of a request without them: ask whether the
      // session is still there.
      if (current() && (code === 1008 || !opened)) verify();
    },
  });
}

// setDown shows or hides the page-level banner of a connection that is
// down: counts and countdowns may be stale meanwhile, and answers given
// are sent once it is back.
const downBanner = $("down-banner");
function setDown(down) {
  document.body.classList.toggle("is-offline", down);
  if (down === !downBanner.hidden) return;
  downBanner.hidden = !down;
  downBanner.textContent = down
    ? "The hitl server cannot be reached. Counts and countdowns may be out of date; answers you give are sent when it is back."
    : "";
}

function stopLive() {
  liveGen++;
  live?.stop();
  live = null;
  clearTimeout(calmTimer);
  dropped = false;
  setDown(false);
  setConn("connecting", "Connecting…");
}

// verify asks the server whether the page is still signed in, and as whom.
async function verify() {
  const r = await me();
  if (session !== "in") return;
  if (r.status === 401) signedOut(endedText());
  else if (r.ok && user && r.data.name !== user.name) signedIn(r.data); // signed in as someone else in another tab
}

// Any request that gets 401 ends the signed-in state.
onUnauthorized(() => {
  if (session === "in") signedOut(endedText());
});

function endedText() {
  return user?.local_mode ? LOCAL_ENDED : SESSION_ENDED;
}

// signedIn shows the inbox for the caller me describes and opens the live
// channel.
function signedIn(data) {
  if (user && user.name !== data.name) {
    // Another person: nothing of the last one's stays on screen.
    stopLive();
    inbox.reset();
    history.reset();
    detail.reset();
    rules.hide();
    clearDrafts();
  }
  user = data;
  setMe(data.name);
  setViewer(data);
  setUndoWindow(data.undo_seconds);
  session = "in";
  signIn.hide();
  $("tabs").hidden = false;
  $("topbar-end").hidden = false;
  $("skip-link").hidden = false;
  // People who signed in see who they are and can sign out; local mode
  // (no users yet) has no one to sign out.
  const account = data.auth === "session";
  $("account").hidden = !account;
  $("topbar").classList.toggle("has-account", account);
  if (account) {
    $("account-name").textContent = data.name;
    $("account-name").title = data.name;
    $("account-initial").textContent = [...data.name][0]?.toUpperCase() || "?";
  }
  const probes = [push.probe()];
  if (data.role === "admin") {
    probes.push(slack.probe(), emailSettings.probe());
  } else {
    slack.hide();
    emailSettings.hide();
  }
  rules.show();
  settleTopBar(probes);
  view = "";
  route(false);
  inbox.render();
  if (!live) startLive();
}

// The top bar's controls are right-aligned, and which of them show
// (Slack, Email, Web Push) is known only once their probes answer: one
// appearing moves the others. settleTopBar keeps the bar's buttons out of
// sight until the probes have answered, at most SETTLE_MS, so they appear
// together and none moves under a pointer about to click it.
const SETTLE_MS = 2000;
let settleGen = 0;
function settleTopBar(probes) {
  const gen = ++settleGen;
  const bar = $("topbar-end");
  bar.dataset.settling = "true";
  Promise.race([Promise.allSettled(probes), sleep(SETTLE_MS)]).then(() => {
    if (gen === settleGen) delete bar.dataset.settling;
  });
}

// signedOut closes the inbox and shows the sign-in view with notice.
function signedOut(notice) {
  session = "out";
  stopLive();
  inbox.reset();
  history.reset();
  detail.reset();
  slack.hide();
  push.hide();
  emailSettings.hide();
  rules.hide();
  hideInbox();
  document.title = "Sign in · hitl";
  signIn.show({ notice });
}

// hideInbox takes everything but the brand out of the page.
function hideInbox() {
  for (const id of ["view-inbox", "view-history", "view-detail", "tabs", "topbar-end", "account", "skip-link"]) $(id).hidden = true;
  $("topbar").classList.remove("has-account");
}

// clearDrafts forgets the answers typed but not sent: they belong to the
// person who signs out.
function clearDrafts() {
  try {
    for (const k of Object.keys(sessionStorage)) {
      if (k.startsWith("hitl:draft:")) sessionStorage.removeItem(k);
    }
  } catch {
    // storage unavailable: nothing kept
  }
}

// boot asks who is signed in. While the server cannot be reached the page
// keeps asking, calmly; any other failure is shown with Try again.
async function boot() {
  session = "unknown";
  for (let attempt = 0; ; attempt++) {
    const r = await me();
    if (r.ok) {
      signedIn(r.data);
      return;
    }
    if (r.status === 401) {
      signedOut("");
      return;
    }
    if (r.status !== 0) {
      session = "out";
      hideInbox();
      document.title = "hitl";
      signIn.problem(`hitl cannot be opened here: ${r.error?.message || `HTTP ${r.status}`}`);
      return;
    }
    setConn("reconnecting", "Connecting…");
    await sleep(Math.min(10000, 500 * 2 ** attempt));
  }
}

boot();
