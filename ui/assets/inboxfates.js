// What became of the inbox's cards that ended elsewhere, asked of the
// server: who answered and with what, what was decided about an action,
// and, after a reconnect, which questions ended while the page was not
// listening.

import { getInteraction } from "./api.js";
import { answeredBy } from "./format.js";
import { actionOutcome } from "./decision.js";
import { chosenText, consensusOutcome, endText } from "./cardoutcome.js";
import { voting } from "./progress.js";
import { editedArgs } from "./editedview.js";

// tellValue completes the outcome of a card answered elsewhere with the
// value chosen ("Hold — chosen by alice via the API.").
export async function tellValue(card) {
  const r = await getInteraction(card.id);
  if (!r.ok || r.data.status !== "answered" || card.sent || card.q.interaction_type === "action") return;
  const res = r.data.result || {};
  if (voting(card.q) && !res.timed_out) {
    // The votes as they ended, and the outcome in its own look.
    card.q.votes = r.data.votes || card.q.votes;
    card.progress.render();
    const o = consensusOutcome(card.q, res);
    card.update(o.text, o.look);
    return;
  }
  if (!res.timed_out) card.update(chosenText(card.q, res));
}

// lookup fills in who answered a card that a POST found already
// answered, and what was decided about an action.
export async function lookup(card) {
  const r = await getInteraction(card.id);
  if (!r.ok || r.data.status !== "answered") return;
  const res = r.data.result || {};
  const first = card.conflict ? "Someone else answered first. " : "";
  const o = card.q.interaction_type === "action" ? actionOutcome(r.data) : null;
  card.showEdited(editedArgs(res.value));
  // This page's own "Always allow…" made a rule with the answer.
  const rule = card.sent && card.value?.always ? " The rule is saved: see Rules in the top bar." : "";
  if (o) card.update(`${first}${o.text}${rule}`, o.kind);
  else if (card.conflict) card.update(res.timed_out ? card.stakes.expiredText(true) : `${first}${answeredBy(res.responded_by, res.channel)}`);
}

// reconcile ends the cards that are not in pending (the ids a full
// replay listed): their questions ended while the page was not
// listening, so what became of each is fetched and shown.
export async function reconcile(cards, pending) {
  for (const card of cards) {
    if (card.resolved || pending.has(card.id)) continue;
    const r = await getInteraction(card.id);
    if (card.resolved || card.gone) continue;
    card.ensure();
    if (!r.ok) {
      if (r.status === 404) card.resolve("gone", "This question no longer exists.");
      continue;
    }
    const it = r.data;
    const res = it.result || {};
    if (it.status === "answered") {
      card.answeredElsewhere(res.timed_out ? card.stakes.expiredText(true) : answeredBy(res.responded_by, res.channel));
      if (!res.timed_out && !card.sent) card.update(chosenText(card.q, res));
    } else if (it.status === "cancelled" || it.status === "expired") {
      card.resolve("cancelled", endText(card, it.status === "expired" ? "timeout" : res.reason));
    }
  }
}
