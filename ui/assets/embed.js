// <hitl-prompt>: the questions an agent asks in a conversation, shown
// inside the chat page the person already has open (docs/embed.md).
//
//   <script type="module" src="https://hitl.example/embed/v1/hitl-prompt.js"></script>
//   <hitl-prompt server="https://hitl.example" session-id="s1" token="hitl_embed_…"></hitl-prompt>
//
// It subscribes to the AI-Parrot HITL contract's channel
// (/ws/userinfo?session_id=…), shows every pending question of those
// sessions inline (each in prompt.js), and lets the person answer there.
// The token (an embed token, minted by the page's backend) travels as a
// WebSocket subprotocol and an Authorization header, never in an address;
// without one, the person's hitl session cookie is used (same site).
//
// Events, bubbling and composed: hitl-question (a question arrived),
// hitl-answered (this prompt's answer was accepted) and hitl-ended (a
// question is over: answered here or elsewhere, cancelled, expired).

import { h, speak } from "./dom.js";
import { connect } from "./live.js";
import { encode } from "./api.js";
import { Prompt } from "./prompt.js";

// The stylesheets of the shadow root: the inbox's own, then the prompt's,
// which maps the host's custom properties onto them.
const STYLES = ["app.css", "action.css", "embed.css"];

// HitlPrompt is the <hitl-prompt> element.
export class HitlPrompt extends HTMLElement {
  static observedAttributes = ["server", "session-id", "token"];

  constructor() {
    super();
    const root = this.attachShadow({ mode: "open" });
    const base = import.meta.url;
    this.list = h("div", { class: "hp-list", part: "list" });
    this.status = h("div", { class: "hp-status", part: "status", hidden: true });
    this.live = h("div", { class: "sr-only", role: "status", "aria-live": "polite" });
    root.append(
      // In CORS mode, as the module itself: hitl serves its assets to the
      // embed origins only.
      ...STYLES.map((name) => h("link", { rel: "stylesheet", crossorigin: "anonymous", href: new URL(name, base).href })),
      h("div", { class: "hp", part: "container" }, this.status, this.list, this.live),
    );
    this.prompts = new Map(); // by interaction id
    this.conn = null;
    this.timer = null;
    this.restartQueued = false;
  }

  // The attributes, as properties.
  get server() { return this.getAttribute("server") || new URL(import.meta.url).origin; }
  set server(v) { this.setAttribute("server", v); }
  get sessionId() { return this.getAttribute("session-id") || ""; }
  set sessionId(v) { this.setAttribute("session-id", v); }
  get token() { return this.getAttribute("token") || ""; }
  set token(v) {
    if (v) this.setAttribute("token", v);
    else this.removeAttribute("token");
  }

  // sessions are the session IDs the element shows.
  get sessions() {
    return this.sessionId.split(/\s+/).filter(Boolean);
  }

  connectedCallback() {
    this.start();
    this.timer = setInterval(() => this.tick(), 1000);
  }

  disconnectedCallback() {
    this.stop();
    clearInterval(this.timer);
    this.timer = null;
  }

  attributeChangedCallback(name, old, value) {
    if (old === value || !this.isConnected || this.restartQueued) return;
    // Several attributes set together restart once.
    this.restartQueued = true;
    queueMicrotask(() => {
      this.restartQueued = false;
      if (!this.isConnected) return;
      this.stop();
      for (const p of this.prompts.values()) p.el.remove();
      this.prompts.clear();
      this.start();
    });
  }

  start() {
    const sessions = this.sessions;
    if (sessions.length === 0) {
      this.showStatus("");
      return;
    }
    let url;
    try {
      url = new URL("/ws/userinfo", this.server);
    } catch {
      this.showStatus("The prompt's server address is not a URL.");
      return;
    }
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    const token = this.token;
    this.conn = connect({
      base: url.href,
      params: sessions.map((s) => ["session_id", s]),
      protocols: token ? ["hitl-embed", token] : undefined,
      onMessage: (msg) => this.onMessage(msg),
      onState: (state) => this.onState(state),
      onClose: ({ code, opened }) => {
        if (!opened || code === 1008) this.showStatus("Questions from the agent cannot be shown: the prompt's access has ended or was refused.");
      },
    });
  }

  stop() {
    this.conn?.stop();
    this.conn = null;
  }

  onState(state) {
    if (state === "live" || state === "reconnected") this.showStatus("");
  }

  showStatus(text) {
    this.status.textContent = text;
    this.status.hidden = !text;
  }

  onMessage(msg) {
    switch (msg.type) {
      case "hitl:question":
      case "hitl:handoff":
        this.add(msg);
        break;
      case "hitl:resolved": {
        const p = this.prompts.get(msg.interaction_id);
        if (p) p.resolved(msg);
        break;
      }
      case "hitl:cancel": {
        const p = this.prompts.get(msg.interaction_id);
        if (p) p.cancelled(msg.reason);
        break;
      }
      case "hitl:progress": {
        const p = this.prompts.get(msg.interaction_id);
        if (p) p.progress(msg);
        break;
      }
      case "hitl:replay_done":
        // A full replay lists what is still pending: a question shown
        // before the connection dropped and missing from it ended
        // meanwhile.
        if (Array.isArray(msg.pending) && !msg.resumed) {
          const pending = new Set(msg.pending);
          for (const [id, p] of this.prompts) if (!pending.has(id)) p.gone();
        }
        break;
    }
  }

  add(q) {
    if (!this.sessions.includes(q.session_id ?? "")) return;
    if (this.prompts.has(q.interaction_id)) return; // shown already (a replay, an escalation)
    const p = new Prompt(q, {
      send: (value) => this.send(q.interaction_id, value),
      load: (id) => this.load(id),
      emit: (name, detail) => this.emit(name, detail),
    });
    this.prompts.set(q.interaction_id, p);
    this.list.append(p.el);
    speak(this.live, p.arrivalText());
    this.emit("hitl-question", {
      interactionId: q.interaction_id,
      interactionType: q.interaction_type,
      sessionId: q.session_id ?? null,
      question: q.question ?? q.message ?? "",
    });
  }

  tick() {
    const now = Date.now();
    for (const p of this.prompts.values()) p.tick(now);
  }

  emit(name, detail) {
    this.dispatchEvent(new CustomEvent(name, { detail, bubbles: true, composed: true }));
  }

  // request calls hitl's API with the element's credentials: the embed
  // token, or else the person's cookie. It resolves to {ok, status, data,
  // error}; status 0 means the server was not reached.
  async request(method, path, body) {
    const headers = { Accept: "application/json" };
    const token = this.token;
    if (token) headers.Authorization = `Bearer ${token}`;
    const init = { method, headers, cache: "no-store", credentials: token ? "omit" : "include", mode: "cors" };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = body;
    }
    let res;
    try {
      res = await fetch(new URL(path, this.server), init);
    } catch {
      return { ok: false, status: 0, error: { code: "network", message: "hitl could not be reached." } };
    }
    let data = null;
    try {
      data = await res.json();
    } catch {
      // no JSON body
    }
    if (res.ok) return { ok: true, status: res.status, data };
    const error = data && data.error ? data.error : { code: "", message: res.statusText || `HTTP ${res.status}` };
    return { ok: false, status: res.status, error };
  }

  send(id, value) {
    return this.request("POST", `/api/v1/interactions/${encodeURIComponent(id)}/respond`, encode({ value }));
  }

  load(id) {
    return this.request("GET", `/api/v1/interactions/${encodeURIComponent(id)}`);
  }
}

if (!customElements.get("hitl-prompt")) customElements.define("hitl-prompt", HitlPrompt);
