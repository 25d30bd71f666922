// The public HTTP API, as the inbox uses it.

import { sleep } from "./dom.js";

// Retry delays for an answer that could not be delivered (network error,
// 502, 503, 504): three retries, then the card offers a Retry button.
const RETRY_DELAYS = [400, 1200, 3000];
const RETRYABLE = new Set([502, 503, 504]);

// unauthorized is called when the server answers 401: the session ended
// (logged out elsewhere, expired, revoked) or was never there.
let unauthorized = () => {};

// onUnauthorized sets what happens when a request of the inbox gets 401.
export function onUnauthorized(fn) {
  unauthorized = fn;
}

// transient reports whether a request that resolved to {status} (as
// requestJSON resolves) may succeed if sent again: the server was never
// reached (0) or a proxy in front of it could not reach it (502, 503,
// 504).
export function transient(status) {
  return status === 0 || RETRYABLE.has(status);
}

function checkAuth(res) {
  if (res && res.status === 401) unauthorized();
}

async function readError(res) {
  try {
    const body = await res.json();
    if (body && body.error) return { code: body.error.code || "", message: body.error.message || "" };
  } catch {
    // not JSON
  }
  return { code: "", message: res.statusText || `HTTP ${res.status}` };
}

// RawJSON is JSON text sent as it is, inside an answer: an action's
// arguments edited as JSON reach the server exactly as typed (JSON.parse
// would quietly keep the last of a repeated key; the server refuses it).
// The text must be valid JSON.
export class RawJSON {
  constructor(text) {
    this.text = text;
  }
}

// encode is JSON.stringify for an answer's body, with RawJSON values
// spliced in as their text.
export function encode(v) {
  if (v instanceof RawJSON) return v.text;
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? "null" : encode(x))).join(",")}]`;
  if (v && typeof v === "object") {
    const fields = Object.entries(v).filter(([, x]) => x !== undefined);
    return `{${fields.map(([k, x]) => `${JSON.stringify(k)}:${encode(x)}`).join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}

// respond answers an interaction through the web HITL contract
// (POST /api/v1/agents/hitl/respond), retrying while the server cannot be
// reached. It resolves to {ok:true} or {ok:false, status, code, message}
// where status 0 means the server was never reached.
export async function respond(id, type, value, onRetry) {
  const body = encode({ interaction_id: id, value, response_type: type });
  for (let attempt = 0; ; attempt++) {
    let res = null;
    let failure = null;
    try {
      res = await fetch("/api/v1/agents/hitl/respond", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body,
        credentials: "same-origin",
        cache: "no-store",
      });
    } catch {
      failure = { ok: false, status: 0, code: "network", message: "The server could not be reached." };
    }
    if (res && res.ok) return { ok: true };
    checkAuth(res);
    if (res && !RETRYABLE.has(res.status)) return { ok: false, status: res.status, ...(await readError(res)) };
    if (res) failure = { ok: false, status: res.status, ...(await readError(res)) };
    if (attempt >= RETRY_DELAYS.length) return failure;
    onRetry?.(attempt + 1);
    await sleep(RETRY_DELAYS[attempt]);
  }
}

// respondNow sends an answer as the page goes away (keepalive: the
// request outlives the page), without waiting for the server's word.
export function respondNow(id, type, value) {
  try {
    fetch("/api/v1/agents/hitl/respond", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: encode({ interaction_id: id, value, response_type: type }),
      credentials: "same-origin",
      cache: "no-store",
      keepalive: true,
    }).catch(() => {});
  } catch {
    // nothing more can be done as the page goes
  }
}

// getJSON fetches a JSON document; it resolves to {ok, status, data, error}.
export function getJSON(url) {
  return requestJSON("GET", url);
}

// postJSON sends body (nothing when undefined) as JSON; it resolves like
// getJSON.
export function postJSON(url, body) {
  return requestJSON("POST", url, body);
}

// requestJSON resolves to {ok, status, data, error, retryAfter}, where
// retryAfter is the Retry-After header in seconds (0 when absent). A 401
// calls the onUnauthorized handler unless quiet is set (the login and
// session calls handle it themselves).
export async function requestJSON(method, url, body, { quiet = false } = {}) {
  const init = { method, credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(url, init);
  } catch {
    return { ok: false, status: 0, error: { code: "network", message: "The server could not be reached." } };
  }
  if (!quiet) checkAuth(res);
  if (!res.ok) {
    const retryAfter = Number.parseInt(res.headers.get("Retry-After") || "", 10);
    return { ok: false, status: res.status, error: await readError(res), retryAfter: Number.isFinite(retryAfter) ? retryAfter : 0 };
  }
  try {
    return { ok: true, status: res.status, data: await res.json() };
  } catch {
    return { ok: false, status: res.status, error: { code: "", message: "The server's answer could not be read." } };
  }
}

// getInteraction fetches one interaction.
export function getInteraction(id) {
  return getJSON(`/api/v1/interactions/${encodeURIComponent(id)}`);
}

// listInteractions fetches one page, newest first.
export function listInteractions({ status = "", limit = 50, cursor = "" } = {}) {
  const q = new URLSearchParams({ limit: String(limit) });
  if (status) q.set("status", status);
  if (cursor) q.set("cursor", cursor);
  return getJSON(`/api/v1/interactions?${q}`);
}

// listRules fetches one page of rules, oldest first: those in force, or
// all of them (revoked and expired too). An admin gets every rule, anyone
// else the rules they made.
export function listRules({ all = false, cursor = "" } = {}) {
  const q = new URLSearchParams({ limit: "100" });
  if (!all) q.set("active", "true");
  if (cursor) q.set("cursor", cursor);
  return getJSON(`/api/v1/rules?${q}`);
}

// revokeRule revokes a rule; it resolves to the rule, revoked.
export function revokeRule(id) {
  return requestJSON("DELETE", `/api/v1/rules/${encodeURIComponent(id)}`);
}
