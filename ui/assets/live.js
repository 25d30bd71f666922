// The live channel: /ws, reconnecting with exponential backoff. Each
// connection starts with a replay that hitl:replay_done ends: every
// pending question on the first connect; on a reconnect, what happened
// while the connection was down (the server resumes from the seq of the
// last message heard, ?after=), or, when it cannot, every pending
// question again. Nothing is lost while the connection is down.

const MIN_DELAY = 500;
const MAX_DELAY = 10000;

// connect opens the WebSocket and keeps it open until stop() is called.
// params, if given, are added to every connection's address (the inbox's
// ?replay=page&sort=…: a paged replay).
// base, if given, is the WebSocket address (default: this page's /ws);
// protocols, if given, are the subprotocols to offer (the embedded
// prompt's token travels as one, never in the address).
// onMessage gets each parsed message; onState gets "connecting", "live",
// "reconnecting" or "reconnected" (open again after a drop); onClose, if
// given, gets each close as {code, opened} (opened: the socket had been
// open), before the next attempt is scheduled.
export function connect({ onMessage, onState, onClose, params, base: address, protocols }) {
  let attempt = 0;
  let everOpen = false;
  let ws = null;
  let timer = null;
  let stopped = false;

  const base = address || `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
  // The resume point: the seq of hitl:replay_done, or of any message
  // since, on the connections this call has opened.
  let seq = null;
  const url = () => {
    const q = new URLSearchParams(params || []);
    if (seq !== null) q.set("after", String(seq));
    const s = q.toString();
    return s ? `${base}?${s}` : base;
  };

  function open() {
    clearTimeout(timer);
    timer = null;
    if (stopped) return;
    onState(everOpen ? "reconnecting" : "connecting");
    const sock = protocols ? new WebSocket(url(), protocols) : new WebSocket(url());
    ws = sock;
    let closed = false;
    let opened = false;
    sock.addEventListener("open", () => {
      if (stopped) return;
      opened = true;
      attempt = 0;
      onState(everOpen ? "reconnected" : "live");
      everOpen = true;
    });
    sock.addEventListener("message", (e) => {
      if (stopped) return;
      let msg;
      try {
        msg = JSON.parse(e.data);
      } catch {
        return;
      }
      if (!msg || typeof msg !== "object") return;
      if (Number.isSafeInteger(msg.seq) && msg.seq >= 0) {
        // A full replay's seq may be lower than the last one heard (the
        // server's database was replaced): it is the point from now on.
        seq = msg.type === "hitl:replay_done" ? msg.seq : Math.max(seq ?? 0, msg.seq);
      }
      onMessage(msg);
    });
    const lost = () => {
      if (closed) return;
      closed = true;
      if (ws === sock) ws = null;
      try {
        sock.close();
      } catch {
        // already closed
      }
      if (stopped) return;
      if (everOpen) onState("reconnecting");
      schedule();
    };
    // A refused handshake and a dropped connection both end in "close"
    // (1006 without a close frame); the server ends a stream whose
    // credentials ended with 1008.
    sock.addEventListener("close", (e) => {
      // It fires once per socket, after "error" when there is one.
      if (!stopped) onClose?.({ code: e.code, opened });
      lost();
    });
    sock.addEventListener("error", lost);
  }

  function schedule() {
    if (timer || stopped) return;
    const base = Math.min(MAX_DELAY, MIN_DELAY * 2 ** attempt);
    attempt += 1;
    const delay = base * (0.75 + Math.random() * 0.5);
    timer = setTimeout(open, delay);
  }

  // Coming back online or to the tab: try at once rather than wait.
  const now = () => {
    if (!stopped && !ws && timer) open();
  };
  const visible = () => {
    if (document.visibilityState === "visible") now();
  };
  window.addEventListener("online", now);
  document.addEventListener("visibilitychange", visible);

  open();

  return {
    // stop closes the connection for good (signing out).
    stop() {
      if (stopped) return;
      stopped = true;
      clearTimeout(timer);
      timer = null;
      window.removeEventListener("online", now);
      document.removeEventListener("visibilitychange", visible);
      const sock = ws;
      ws = null;
      try {
        sock?.close(1000, "signed out");
      } catch {
        // already closed
      }
    },
  };
}
