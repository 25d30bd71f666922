// The rules dialog, opened from the top bar: the rules that approve or
// reject actions without asking anyone, with revoke. The server decides
// what the caller sees (an admin every rule, anyone else the rules they
// made with "Always allow…") and who may revoke what.

import { h, icon, speak } from "./dom.js";
import { listRules, revokeRule } from "./api.js";
import { ago, timeEl } from "./format.js";
import { agentText, kindText, matchText, ruleText } from "./ruletext.js";
import { visibleText } from "./codeview.js";

// RulesView is the header's Rules button and the dialog it opens.
export class RulesView {
  // hooks: {announce(text)}
  constructor(button, dialog, hooks) {
    this.button = button;
    this.dialog = dialog;
    this.hooks = hooks;
    this.gen = 0;
    this.cursor = "";
    this.loading = false;
    this.build();
    button.prepend(icon("shield"));
    button.addEventListener("click", () => this.open());
    dialog.addEventListener("close", () => {
      if (!this.button.hidden) this.button.focus();
    });
  }

  build() {
    this.all = h("input", { type: "checkbox", id: "rules-all", onchange: () => this.load(true) });
    this.list = h("ul", { class: "rule-list", id: "rules-list", "aria-labelledby": "rules-title", "aria-busy": "false" });
    this.empty = h("p", { class: "rule-empty", id: "rules-empty", hidden: true });
    this.error = h("p", { class: "notice notice-error", id: "rules-error", role: "alert" });
    this.more = h("button", { type: "button", class: "btn btn-quiet btn-small", id: "rules-more", hidden: true, onclick: () => this.load(false) }, h("span", { text: "Load more" }));
    this.result = h("p", { class: "dialog-result", id: "rules-result", role: "status" });
    const body = h("div", { class: "dialog-body" },
      h("label", { class: "check rules-filter", for: "rules-all" }, this.all, h("span", { text: "Show revoked and expired rules too" })),
      this.error, this.list, this.empty, this.more);
    this.dialog.setAttribute("aria-describedby", "rules-desc");
    this.dialog.append(h("div", { class: "dialog-form" },
      h("header", { class: "dialog-head" },
        h("div", { class: "dialog-titles" },
          h("h2", { id: "rules-title", class: "dialog-title" }, icon("shield"), h("span", { text: "Rules" })),
          h("p", { class: "dialog-sub", id: "rules-desc", text: "A rule approves or rejects an agent's matching actions at once, without asking anyone. Admins see every rule; everyone else sees the rules they made with “Always allow…”." })),
        h("button", { type: "button", class: "btn btn-quiet btn-icon", id: "rules-close", "aria-label": "Close", onclick: () => this.dialog.close() }, icon("x"))),
      body,
      h("footer", { class: "dialog-foot" }, this.result,
        h("div", { class: "dialog-actions" },
          h("button", { type: "button", class: "btn btn-secondary", id: "rules-done", onclick: () => this.dialog.close() }, h("span", { text: "Close" }))))));
  }

  // show shows the button (signed in).
  show() {
    this.button.hidden = false;
  }

  // hide hides the button and closes the dialog (signing out).
  hide() {
    this.gen++;
    this.button.hidden = true;
    if (this.dialog.open) this.dialog.close();
    this.list.replaceChildren();
  }

  open() {
    if (this.dialog.open) return;
    speak(this.result);
    this.dialog.showModal();
    this.dialog.querySelector("#rules-close").focus();
    this.load(true);
  }

  async load(reset) {
    if (this.loading) {
      this.again = true;
      return;
    }
    this.loading = true;
    const gen = this.gen;
    this.list.setAttribute("aria-busy", "true");
    if (reset) {
      this.empty.hidden = false;
      this.empty.textContent = "Loading rules…";
    }
    const r = await listRules({ all: this.all.checked, cursor: reset ? "" : this.cursor });
    this.loading = false;
    if (gen !== this.gen) return;
    this.list.setAttribute("aria-busy", "false");
    if (!r.ok) {
      if (r.status !== 401) speak(this.error, `The rules could not be loaded: ${r.status === 0 ? "the server could not be reached" : r.error?.message || "server error"}.`);
      this.empty.hidden = true;
    } else {
      speak(this.error);
      if (reset) this.list.replaceChildren();
      const now = Date.now();
      this.list.append(...r.data.rules.map((rule) => this.item(rule, now)));
      this.cursor = r.data.next_cursor || "";
      this.more.hidden = !this.cursor;
      this.showEmpty();
    }
    if (this.again) {
      this.again = false;
      this.load(true);
    }
  }

  showEmpty() {
    this.empty.hidden = this.list.children.length > 0;
    this.empty.textContent = this.all.checked
      ? "No rules yet."
      : "No rules in force. Choose “Always allow…” on an action to make one.";
  }

  // item renders one rule.
  item(rule, now) {
    const expires = rule.expires_at ? Date.parse(rule.expires_at) : Infinity;
    const state = rule.revoked_at ? "revoked" : expires <= now ? "expired" : "active";
    const allow = rule.effect !== "deny";
    const sentence = `${ruleText(rule)}.`;
    const li = h("li", { class: `rule-item is-${state}`, "data-rule-id": rule.rule_id },
      h("div", { class: "rule-head" },
        h("span", { class: `effect-badge effect-${allow ? "allow" : "deny"}`, text: allow ? "Allow" : "Deny" }),
        h("code", { class: "action-chip", text: rule.kind ? kindText(rule.kind) : rule.action_name }),
        h("span", { class: "rule-agent" }, "from ", h("strong", { text: agentText(rule.source_agent) }),
          rule.asked_by ? h("span", { class: "rule-asker", text: ` asked by ${rule.asked_by}` }) : null),
        state !== "active" ? h("span", { class: "rule-state", text: state === "revoked" ? "Revoked" : "Expired" }) : null),
      h("p", { class: "rule-match-text" }, visibleText(matchText(rule.match, rule.effect))),
      !allow && rule.message ? h("p", { class: "rule-msg" }, h("span", { class: "h-label", text: "Reason " }), visibleText(rule.message)) : null,
      h("p", { class: "rule-meta" }, metaParts(rule, state, expires, now)));
    if (state === "active") {
      li.append(h("button", {
        type: "button", class: "btn btn-secondary btn-small btn-revoke", "aria-label": `Revoke rule: ${sentence}`,
        onclick: (e) => this.revoke(rule, li, e.currentTarget),
      }, icon("x"), h("span", { text: "Revoke" })));
    }
    return li;
  }

  async revoke(rule, li, btn) {
    if (btn.getAttribute("aria-disabled") === "true") return;
    btn.setAttribute("aria-disabled", "true");
    btn.querySelector("span").textContent = "Revoking…";
    const r = await revokeRule(rule.rule_id);
    if (!li.isConnected) return;
    if (!r.ok) {
      btn.removeAttribute("aria-disabled");
      btn.querySelector("span").textContent = "Revoke";
      if (r.status === 401) return;
      this.result.dataset.kind = "error";
      speak(this.result, icon("alert"), h("span", { text: `The rule was not revoked: ${r.status === 0 ? "the server could not be reached" : r.error?.message || "server error"}.` }));
      btn.focus();
      return;
    }
    const text = `Revoked: ${ruleText(rule)}.`;
    this.result.dataset.kind = "ok";
    speak(this.result, icon("check"), h("span", { text }));
    if (this.all.checked) {
      const fresh = this.item(r.data, Date.now());
      li.replaceWith(fresh);
      fresh.tabIndex = -1;
      fresh.focus();
      return;
    }
    // Only rules in force are listed: this one leaves, and the focus goes
    // to the next rule's button (or the previous one's, or Close).
    const items = [...this.list.children];
    const i = items.indexOf(li);
    const next = items[i + 1] || items[i - 1];
    li.remove();
    this.showEmpty();
    (next?.querySelector(".btn-revoke") || this.dialog.querySelector("#rules-done")).focus();
  }
}

// metaParts says who made a rule, when, and until when it holds.
function metaParts(rule, state, expires, now) {
  const parts = [`Made by ${rule.created_by || "someone"} `, timeEl(rule.created_at)];
  if (state === "revoked") {
    parts.push(` · revoked by ${rule.revoked_by || "someone"} `, timeEl(rule.revoked_at));
  } else if (Number.isFinite(expires)) {
    parts.push(state === "expired" ? " · expired " : " · expires ", h("time", { datetime: rule.expires_at, text: ago(new Date(expires), now) }));
  } else {
    parts.push(" · until revoked");
  }
  return parts;
}
