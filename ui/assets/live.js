// The live channel: /ws, reconnecting with exponential backoff. The server
// replays every pending question on each connect, so nothing is lost while
// the connection is down.

const MIN_DELAY = 500;
const MAX_DELAY = 10000;

// connect opens the WebSocket and keeps it open. onMessage gets each parsed
// message; onState gets "connecting", "live", "reconnecting" or
// "reconnected" (open again after a drop).
export function connect({ onMessage, onState }) {
  let attempt = 0;
  let everOpen = false;
  let ws = null;
  let timer = null;

  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;

  function open() {
    clearTimeout(timer);
    timer = null;
    onState(everOpen ? "reconnecting" : "connecting");
    const sock = new WebSocket(url);
    ws = sock;
    let closed = false;
    sock.addEventListener("open", () => {
      attempt = 0;
      onState(everOpen ? "reconnected" : "live");
      everOpen = true;
    });
    sock.addEventListener("message", (e) => {
      let msg;
      try {
        msg = JSON.parse(e.data);
      } catch {
        return;
      }
      if (msg && typeof msg === "object") onMessage(msg);
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
      if (everOpen) onState("reconnecting");
      schedule();
    };
    sock.addEventListener("close", lost);
    sock.addEventListener("error", lost);
  }

  function schedule() {
    if (timer) return;
    const base = Math.min(MAX_DELAY, MIN_DELAY * 2 ** attempt);
    attempt += 1;
    const delay = base * (0.75 + Math.random() * 0.5);
    timer = setTimeout(open, delay);
  }

  // Coming back online or to the tab: try at once rather than wait.
  const now = () => {
    if (!ws && timer) open();
  };
  window.addEventListener("online", now);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") now();
  });

  open();
}
