// Web Push on this device: "Notify me on this device" registers the
// service worker (/sw.js, scope /), subscribes with the server's VAPID key
// (GET /api/v1/push/key) and keeps the subscription on the server (POST
// /api/v1/push/subscriptions), so that questions reach this browser even
// when the inbox is closed. "Turn off" forgets it on both sides (DELETE).
// The subscription also asks for questions that target no one in
// particular, which this person sees in the inbox anyway.

import { h, icon, sleep } from "./dom.js";
import { getJSON, postJSON, requestJSON, transient } from "./api.js";

const KEY_URL = "/api/v1/push/key";
const SUBSCRIPTIONS_URL = "/api/v1/push/subscriptions";
const WORKER_URL = "/sw.js";
// SUBSCRIBE_TIMEOUT bounds the wait for the browser's push service: some
// browsers (Chromium without Google's services, headless ones) never
// answer.
const SUBSCRIBE_TIMEOUT = 10000;
// KEY_RETRIES are the waits before asking for the key again when the
// request failed on the way (the server was restarting, a proxy could not
// reach it): without them the control would stay hidden until a reload.
// A 404 (no Web Push on this server) is an answer, not retried.
const KEY_RETRIES = [1000, 3000, 10000, 30000];

// The states the control shows.
const LABELS = {
  off: ["Notify me on this device", ""], // the button says it
  on: ["Turn off on this device", "On"],
  blocked: ["Notify me on this device", "Blocked by the browser"],
  unsupported: ["Notify me on this device", "Not supported by this browser"],
  working: ["Notify me on this device", "Working…"],
  failed: ["Try again", ""],
};

// supported reports whether this browser has what Web Push needs.
function supported() {
  return "serviceWorker" in navigator && "PushManager" in window && typeof window.Notification === "function";
}

// PushControl is the header's "Notify me on this device" button and the
// state beside it.
export class PushControl {
  constructor(host, hooks) {
    this.hooks = hooks;
    this.key = "";
    this.gen = 0;
    this.button = h("button", { type: "button", class: "btn btn-quiet btn-small btn-push", id: "push-btn", "aria-pressed": "false", "aria-describedby": "push-state", onclick: () => this.toggle() },
      icon("bell"), h("span", { class: "btn-label" }));
    this.state = h("span", { class: "notify-state push-state", id: "push-state" });
    this.el = h("span", { class: "push", id: "push", hidden: true }, this.button, this.state);
    this.host = host;
  }

  // probe shows the control when the server runs Web Push, in the state
  // this browser is in; a subscription this browser already has is given
  // to the server again (for whoever is signed in now).
  async probe() {
    const gen = ++this.gen;
    let r = await getJSON(KEY_URL);
    for (const wait of KEY_RETRIES) {
      if (r.ok || !transient(r.status) || gen !== this.gen) break;
      await sleep(wait);
      if (gen !== this.gen) return;
      r = await getJSON(KEY_URL);
    }
    if (gen !== this.gen) return;
    if (!r.ok) {
      this.el.hidden = true;
      return;
    }
    this.key = r.data.public_key;
    // In the page only when the server runs Web Push.
    if (!this.el.isConnected) this.host.append(this.el);
    this.el.hidden = false;
    if (!supported()) return this.render("unsupported");
    if (Notification.permission === "denied") return this.render("blocked");
    const sub = await this.current();
    if (gen !== this.gen) return;
    if (sub && sameKey(sub, this.key)) {
      await postJSON(SUBSCRIPTIONS_URL, { ...sub.toJSON(), untargeted: true });
      return this.render("on");
    }
    this.render("off");
  }

  // hide hides the control (signing out).
  hide() {
    this.gen++;
    this.el.hidden = true;
  }

  // current returns this browser's subscription, or null.
  async current() {
    const reg = await navigator.serviceWorker.getRegistration("/");
    return reg ? reg.pushManager.getSubscription() : null;
  }

  render(state, detail) {
    const [label, text] = LABELS[state];
    this.el.dataset.state = state;
    this.button.querySelector(".btn-label").textContent = label;
    this.button.title = label;
    this.button.setAttribute("aria-pressed", String(state === "on"));
    this.button.disabled = state === "unsupported" || state === "blocked" || state === "working";
    this.state.textContent = detail || text;
    this.state.title = state === "blocked" ? "Allow notifications for this site in the browser's settings, then reload." : "";
  }

  async toggle() {
    if (this.el.dataset.state === "on") return this.turnOff();
    return this.turnOn();
  }

  async turnOn() {
    this.render("working");
    let permission = Notification.permission;
    try {
      if (permission === "default") permission = await Notification.requestPermission();
    } catch {
      // the state below says what happened
    }
    if (permission !== "granted") return this.render(permission === "denied" ? "blocked" : "off");
    try {
      const reg = await navigator.serviceWorker.register(WORKER_URL, { scope: "/" });
      await navigator.serviceWorker.ready;
      let sub = await reg.pushManager.getSubscription();
      if (sub && !sameKey(sub, this.key)) {
        await sub.unsubscribe(); // made with a key the server no longer has
        sub = null;
      }
      sub ||= await within(reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: fromBase64URL(this.key) }),
        SUBSCRIBE_TIMEOUT, "the browser's push service did not answer");
      const r = await postJSON(SUBSCRIPTIONS_URL, { ...sub.toJSON(), untargeted: true });
      if (!r.ok) throw new Error(r.error?.message || "The server refused the subscription.");
    } catch (e) {
      return this.render("failed", `Could not turn on: ${e.message || e}`);
    }
    this.render("on");
    this.hooks.announce?.("Notifications on this device are on.");
  }

  async turnOff() {
    this.render("working");
    try {
      const sub = await this.current();
      if (sub) {
        await requestJSON("DELETE", SUBSCRIPTIONS_URL, { endpoint: sub.endpoint });
        await sub.unsubscribe();
      }
    } catch (e) {
      return this.render("failed", `Could not turn off: ${e.message || e}`);
    }
    this.render("off");
    this.hooks.announce?.("Notifications on this device are off.");
  }
}

// within resolves as promise does, or fails with message after ms.
function within(promise, ms, message) {
  let timer;
  const late = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(message)), ms); });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

// sameKey reports whether sub was made with the server's key.
function sameKey(sub, key) {
  const k = sub.options?.applicationServerKey;
  if (!k) return true; // browsers that do not say
  return toBase64URL(new Uint8Array(k)) === key;
}

function fromBase64URL(s) {
  const b = atob(s.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (s.length % 4)) % 4));
  return Uint8Array.from(b, (c) => c.charCodeAt(0));
}

function toBase64URL(bytes) {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
