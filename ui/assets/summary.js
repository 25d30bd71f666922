// What to call a question where one line names it. An action's summary
// (the server derives it from the call: the command's first line, "Write
// config/prod.yaml (6 lines)", "github · delete_repo: acme/site") says
// what the call will do; it is the title when the agent asked nothing of
// its own ("Run Bash?" says nothing a reviewer can judge), and goes
// beneath the agent's own question otherwise.

// headline is the line that names q: its question, or an action's
// summary in place of the question an action gets by default.
export function headline(q) {
  if (q?.interaction_type === "action" && q.summary && q.question === `Run ${q.action?.name}?`) return q.summary;
  return String(q?.question ?? "");
}

// subline is an action's summary when the headline is the agent's own
// question, to show beneath it; "" otherwise.
export function subline(q) {
  if (q?.interaction_type !== "action" || !q.summary) return "";
  return q.summary === headline(q) ? "" : q.summary;
}
