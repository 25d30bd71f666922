// The inbox's service worker, served at /sw.js so that its scope is the
// whole inbox. It shows the Web Push notifications hitl sends when a
// question is created for this person (the payload: id, type, question,
// agent, deadline and the question's URL), and opens or focuses the
// question's page when one is clicked.

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("push", (event) => {
  let p = {};
  try {
    p = event.data ? event.data.json() : {};
  } catch {
    p = {};
  }
  const title = p.agent ? `${p.agent} asks` : "A question for you";
  event.waitUntil(self.registration.showNotification(title, {
    body: p.question || "A question is waiting in hitl.",
    tag: p.id ? `hitl-${p.id}` : "hitl",
    timestamp: Date.now(),
    data: { url: sameOrigin(p.url) },
  }));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = sameOrigin(event.notification.data && event.notification.data.url);
  event.waitUntil(openOrFocus(url));
});

// openOrFocus focuses a window already at url, or opens one.
async function openOrFocus(url) {
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  for (const w of windows) {
    if (w.url === url && "focus" in w) return w.focus();
  }
  return self.clients.openWindow(url);
}

// sameOrigin returns u resolved against the inbox, or the inbox itself
// when it would lead elsewhere: a push never opens another site.
function sameOrigin(u) {
  try {
    const url = new URL(u || "/", self.location.origin);
    if (url.origin === self.location.origin) return url.href;
  } catch {
    // fall through
  }
  return new URL("/", self.location.origin).href;
}
