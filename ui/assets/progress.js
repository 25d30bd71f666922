// Several people on one question: the votes so far ("1 of 2 approvals —
// alice approved"), the person's own vote, and who has claimed it
// ("alice is on it"), with the button to claim or release it.

import { h } from "./dom.js";
import { requestJSON } from "./api.js";

// me is the signed-in person's name (set by the app).
let me = "";
export function setMe(name) {
  me = name || "";
}

// voting reports whether q is decided by counting votes.
export function voting(q) {
  return !!q.consensus && q.consensus.mode !== "first";
}

// describeVote says what a vote answered, as the server's Describe does.
export function describeVote(q, v) {
  if (q.interaction_type === "approval") return v.value === true ? "approved" : "rejected";
  if (q.interaction_type === "single_choice" || q.interaction_type === "multi_choice") {
    const keys = Array.isArray(v.value) ? v.value : [v.value];
    const label = (k) => q.options?.find((o) => o.key === k)?.label || k;
    return `chose ${keys.map(label).join(", ")}`;
  }
  return "answered";
}

// tallyText is the line a card shows: "1 of 2 approvals — alice approved".
export function tallyText(q, votes, needed) {
  if (!votes.length && !needed) return "";
  const who = votes.map((v) => `${v.by === me ? "you" : v.by} ${describeVote(q, v)}`).join(", ");
  let head;
  if (q.interaction_type === "approval") {
    const yes = votes.filter((v) => v.value === true).length;
    head = `${yes} of ${needed} approval${needed === 1 ? "" : "s"}`;
  } else {
    head = `${votes.length} answer${votes.length === 1 ? "" : "s"}, ${needed} alike needed`;
  }
  const veto = q.consensus?.veto ? " (any reject vetoes)" : "";
  return who ? `${head}${veto} — ${who}` : `${head}${veto}`;
}

// Progress is a card's line of votes and claim. card: the Card, whose q
// holds votes, votes_needed, claim and claimed as the server last said.
export class Progress {
  constructor(card) {
    this.card = card;
    this.votes = h("p", { class: "progress-votes", hidden: true });
    this.mine = h("p", { class: "progress-mine", hidden: true });
    this.claimText = h("span", { class: "progress-claim-text" });
    this.claimButton = h("button", { type: "button", class: "btn btn-secondary btn-small progress-claim-button", onclick: () => this.toggleClaim() });
    this.claimLine = h("p", { class: "progress-claim" }, this.claimText, this.claimButton);
    this.escalation = h("p", { class: "progress-escalation", hidden: true });
    this.el = h("div", { class: "progress", "aria-live": "polite" }, this.votes, this.mine, this.claimLine, this.escalation);
  }

  // apply takes a hitl:progress message.
  apply(msg) {
    const q = this.card.q;
    q.votes = msg.votes;
    if (msg.votes_needed) q.votes_needed = msg.votes_needed;
    q.claimed = msg.claimed || undefined;
    if (msg.event === "reminded" || msg.event === "escalated") {
      this.escalation.textContent = escalationText(msg.event, msg.escalation, msg.at);
      this.escalation.hidden = false;
    }
    this.render();
  }

  // claim returns the claim that holds now, or null.
  claim() {
    const c = this.card.q.claimed;
    return c && Date.parse(c.expires_at) > Date.now() ? c : null;
  }

  // ownVote returns the signed-in person's vote, or null.
  ownVote() {
    return (this.card.q.votes || []).find((v) => v.by === me) || null;
  }

  render() {
    const q = this.card.q;
    const votes = q.votes || [];
    const text = voting(q) ? tallyText(q, votes, q.votes_needed || 0) : "";
    this.votes.textContent = text;
    this.votes.hidden = !text;
    const own = voting(q) ? this.ownVote() : null;
    // Once the question ended, nobody is waiting for the others.
    const waiting = this.card.resolved ? "" : " Your vote is counted; waiting for the others.";
    this.mine.textContent = own ? `You ${describeVote(q, own)}.${waiting}` : "";
    this.mine.hidden = !own;
    if (own) this.card.lockVoted?.();
    const c = this.claim();
    if (c) {
      const until = new Date(c.expires_at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
      const only = c.by !== me && q.claim === "exclusive" ? " Only they may answer until then." : "";
      this.claimText.textContent = c.by === me ? `You are on it (until ${until}).` : `${c.by} is on it (until ${until}).${only}`;
    } else {
      this.claimText.textContent = "";
    }
    const exclusiveOther = c && c.by !== me && q.claim === "exclusive";
    // The claim line says why the answer is locked; the card says it once.
    this.card.setClaimLock?.(exclusiveOther, exclusiveOther ? `${c.by} is on it; only they may answer until the claim ends.` : "");
    this.claimButton.textContent = c && c.by === me ? "Release" : "I've got this";
    // The button is offered on questions meant to be claimed (that name a
    // claim mode) and on those someone claimed anyway.
    const claimable = !!q.claim || !!q.claimed;
    this.claimButton.hidden = !claimable || !!(c && c.by !== me) || !!own;
    this.claimLine.hidden = !claimable && !c;
    this.claimButton.setAttribute("aria-label", c && c.by === me ? "Release your claim on this question" : "I've got this: claim this question, so others see you are on it");
  }

  // tick re-renders when a claim may have run out.
  tick() {
    if (this.card.q.claimed && !this.claim()) this.render();
  }

  // takeOver claims a handoff for this person as they start to reply,
  // when it is meant to be claimed and nobody holds it: the others see
  // who took the conversation, and cannot reply over them.
  takeOver() {
    const q = this.card.q;
    if (!q.claim || this.claim() || this.taking) return;
    this.taking = true;
    this.toggleClaim().finally(() => { this.taking = false; });
  }

  async toggleClaim() {
    const c = this.claim();
    const url = `/api/v1/interactions/${encodeURIComponent(this.card.id)}/claim`;
    const r = c && c.by === me ? await requestJSON("DELETE", url) : await requestJSON("POST", url, { channel: "web" });
    if (r.ok) {
      this.card.q.claimed = r.data.claimed || undefined;
      this.render();
      this.card.hooks.announce(r.data.claimed ? "You are on it." : "Claim released.");
    } else {
      this.card.showError(r.error?.message || "The claim could not be changed.");
    }
  }
}

// escalationText says what a step of the escalation did: "Reminder sent
// 10:42", "Escalated to sre-leads, bob 11:02".
export function escalationText(event, step, at) {
  const when = new Date(at || Date.now()).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  if (event !== "escalated") return `Reminder sent ${when}`;
  const added = [...(step?.added?.groups || []), ...(step?.added?.users || [])];
  return `Escalated to ${added.join(", ") || "more people"} ${when}`;
}
