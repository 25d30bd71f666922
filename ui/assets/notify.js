// Browser notifications, as the human_feedback contract has them:
// permission is asked from a button, because browsers ignore requests
// that no gesture started; then one notification per new question, which
// focuses its card when clicked.

const TITLE = "Human Feedback Required";
const SEEN_KEY = "hitl:notified";
const SEEN_MAX = 500;

const supported = typeof window.Notification === "function";
const open = new Map(); // interaction id → Notification

// setupNotifications wires the permission button and state label.
export function setupNotifications(button, state) {
  const render = () => {
    const p = supported ? Notification.permission : "unsupported";
    button.hidden = p !== "default";
    state.hidden = p === "default";
    state.textContent = {
      granted: "Notifications on",
      denied: "Notifications blocked",
      unsupported: "",
    }[p] ?? "";
    state.title = p === "denied" ? "Allow notifications for this site in the browser's settings to be told of new questions." : "";
    if (p === "unsupported") state.hidden = true;
  };
  if (supported) {
    button.addEventListener("click", async () => {
      try {
        await Notification.requestPermission();
      } catch {
        // older browsers take a callback; the state is re-read below
      }
      render();
    });
  }
  render();
}

function alreadyNotified(id) {
  let seen = [];
  try {
    seen = JSON.parse(localStorage.getItem(SEEN_KEY) || "[]");
  } catch {
    seen = [];
  }
  if (!Array.isArray(seen)) seen = [];
  if (seen.includes(id)) return true;
  seen.push(id);
  try {
    localStorage.setItem(SEEN_KEY, JSON.stringify(seen.slice(-SEEN_MAX)));
  } catch {
    // storage unavailable: notify anyway
  }
  return false;
}

// notify shows one notification for question q, once per browser (other
// tabs and reloads skip it); onClick runs when it is clicked.
export function notify(q, body, onClick) {
  if (!supported || Notification.permission !== "granted") return;
  if (alreadyNotified(q.interaction_id)) return;
  let n;
  try {
    n = new Notification(TITLE, { body, tag: q.interaction_id, requireInteraction: true, silent: false });
  } catch {
    return; // e.g. Android Chrome, which only allows service-worker notifications
  }
  open.set(q.interaction_id, n);
  n.addEventListener("click", () => {
    window.focus();
    onClick();
    n.close();
  });
  n.addEventListener("close", () => open.delete(q.interaction_id));
}

// dismiss closes the notification of an interaction that has ended.
export function dismiss(id) {
  const n = open.get(id);
  if (n) {
    n.close();
    open.delete(id);
  }
}
