// The host page's own script: it logs the prompt's events, as a chat
// would to scroll, badge or log.
window.hitlEvents = [];
for (const name of ["hitl-question", "hitl-answered", "hitl-ended"]) {
  document.addEventListener(name, (e) => window.hitlEvents.push({ name, ...e.detail }));
}
