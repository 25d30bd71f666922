// The email settings dialog, for admins: SMTP URL, From, delay, default
// recipients and on/off, over GET/POST /api/v1/email/config, and "Test
// connection" (POST /api/v1/email/test), which sends a test mail with the
// dialog's values (unsaved) and shows the result.
//
// The server shows the SMTP URL's password masked (smtp://user:xxxxx@…)
// and never in clear; the URL is sent back only when it was changed, and a
// changed URL that keeps the mask keeps the saved password. Fields set on
// the server by flags or HITL_* variables are read-only and never sent.

import { h, icon, speak } from "./dom.js";
import { getJSON, postJSON } from "./api.js";
import { SettingsDialog } from "./settingsdialog.js";

const CONFIG_URL = "/api/v1/email/config";
const TEST_URL = "/api/v1/email/test";
const MAX_DELAY = 30 * 24 * 3600;

// ENV names the server's variable for each field.
const ENV = {
  enabled: "HITL_EMAIL_ENABLED",
  smtp_url: "HITL_SMTP_URL",
  from: "HITL_SMTP_FROM",
  delay_seconds: "HITL_EMAIL_DELAY_SECONDS",
  default_recipients: "HITL_EMAIL_DEFAULT_RECIPIENTS",
};

// EmailSettings is the header's Email button and the dialog it opens.
export class EmailSettings extends SettingsDialog {
  // host is where the button goes; hooks: {announce(text)}
  constructor(host, hooks) {
    const button = h("button", {
      type: "button", class: "btn btn-quiet btn-small btn-email", id: "email-btn", title: "Email settings",
      "aria-label": "Email settings", "aria-haspopup": "dialog", "aria-controls": "email-dialog", hidden: true,
    }, icon("send"), h("span", { class: "btn-label", text: "Email" }));
    host.append(button);
    const dialog = h("dialog", { id: "email-dialog", class: "dialog", "aria-labelledby": "email-title", "aria-describedby": "email-desc" });
    document.body.append(dialog);
    super(button, dialog, CONFIG_URL);
    this.hooks = hooks;
    this.build();
  }

  build() {
    const f = (this.fields = {
      enabled: field("enabled", "switch", "Mail unanswered questions", ""),
      smtp_url: field("smtp_url", "text", "SMTP server",
        "smtp://user:password@host:587 (STARTTLS when offered) or smtps://…:465. The saved password shows as xxxxx; keep it to keep the password.",
        { class: "input input-mono", placeholder: "smtp://user:password@smtp.example.com:587", autocapitalize: "none" }),
      from: field("from", "text", "From", "The sender, such as hitl <hitl@example.com>.", { class: "input", autocomplete: "off" }),
      delay_seconds: field("delay_seconds", "number", "Delay before mailing",
        "How long a question waits unanswered before it is mailed; 0 mails at once.",
        { class: "input input-number", inputmode: "numeric", min: 0, max: MAX_DELAY, step: 1 }),
      default_recipients: field("default_recipients", "textarea", "Default recipients",
        "One address per line: who is mailed questions that target no one in particular.", { class: "input input-mono", rows: 3 }),
    });
    this.state = h("p", { class: "slack-state", id: "email-state" }, h("span", { class: "state-dot", "aria-hidden": "true" }), h("span", { class: "state-text" }));
    this.panelError = h("p", { class: "notice notice-error", id: "email-error", role: "alert" });
    this.result = h("p", { class: "dialog-result", id: "email-result", role: "status" });
    this.testBtn = h("button", { type: "button", class: "btn btn-secondary", id: "email-test", onclick: () => this.test() },
      icon("send"), h("span", { text: "Test connection" }));
    this.saveBtn = h("button", { type: "submit", class: "btn btn-primary", id: "email-save" }, icon("check"), h("span", { text: "Save" }));
    this.body = h("fieldset", { class: "dialog-fields" }, h("legend", { class: "sr-only", text: "Email settings" }),
      ...Object.values(f).map((x) => x.el));
    this.form = h("form", { class: "dialog-form", novalidate: true, onsubmit: (e) => { e.preventDefault(); this.save(); } },
      h("header", { class: "dialog-head" },
        h("div", { class: "dialog-titles" },
          h("h2", { id: "email-title", class: "dialog-title" }, icon("send"), h("span", { text: "Email" })),
          h("p", { class: "dialog-sub", id: "email-desc", text: "Questions still unanswered after the delay are mailed to the people they target, with links that answer them." })),
        h("button", { type: "button", class: "btn btn-quiet btn-icon", id: "email-close", "aria-label": "Close", onclick: () => this.dialog.close() }, icon("x"))),
      h("div", { class: "dialog-body" }, this.state, this.panelError, this.body),
      h("footer", { class: "dialog-foot" }, this.result, h("div", { class: "dialog-actions" }, this.testBtn, this.saveBtn)));
    this.dialog.append(this.form);
    this.form.addEventListener("input", (e) => {
      const name = e.target.closest("[data-field]")?.dataset.field;
      if (name) this.fields[name].setError("");
    });
  }

  async open() {
    if (this.dialog.open || this.busy) return;
    const r = await getJSON(CONFIG_URL);
    if (this.button.hidden) return; // signed out meanwhile
    speak(this.panelError);
    speak(this.result);
    this.body.disabled = !r.ok;
    if (r.ok) this.fill(r.data);
    else speak(this.panelError, `The email settings could not be loaded: ${r.error?.message || "server error"}.`);
    this.dialog.showModal();
    (this.body.querySelector("input:not([disabled]):not([readonly])") || this.dialog.querySelector("#email-close")).focus();
  }

  // fill shows a configuration as the server returned it.
  fill(view) {
    const env = new Set(view.from_environment || []);
    for (const [name, f] of Object.entries(this.fields)) f.set(view[name], env.has(name) ? ENV[name] : "");
    const on = view.enabled && view.smtp_url && view.from;
    this.state.dataset.state = on ? "on" : view.enabled ? "warn" : "off";
    this.state.querySelector(".state-text").textContent = on
      ? "On: unanswered questions are mailed."
      : view.enabled ? "On, but nothing is mailed without an SMTP server and a From address." : "Off: questions stay in the web inbox.";
  }

  // read collects the changed fields that the environment does not set.
  read() {
    const body = {};
    const errors = [];
    for (const f of Object.values(this.fields)) {
      if (f.env) continue;
      const r = f.read();
      if (r.error) errors.push([f, r.error]);
      else if (r.changed) body[f.name] = r.value;
    }
    for (const [f, message] of errors) f.setError(message);
    if (errors.length) errors[0][0].control.focus();
    return errors.length ? null : body;
  }

  async save() {
    if (this.busy) return;
    speak(this.panelError);
    const body = this.read();
    if (!body) return;
    const r = await this.send(this.saveBtn, "Saving…", CONFIG_URL, body);
    if (!r.ok) return this.serverError(r, "The settings were not saved");
    this.fill(r.data);
    this.result.dataset.kind = "ok";
    speak(this.result, icon("check"), h("span", { text: `Saved. Email is ${r.data.enabled ? "on" : "off"}.` }));
    this.hooks.announce?.("Email settings saved.");
  }

  async test() {
    if (this.busy) return;
    speak(this.panelError);
    const body = this.read();
    if (!body) return;
    const r = await this.send(this.testBtn, "Testing…", TEST_URL, body);
    if (!r.ok) return this.serverError(r, "The test could not run");
    const ok = r.data.success === true;
    this.result.dataset.kind = ok ? "ok" : "error";
    speak(this.result, icon(ok ? "check" : "alert"), h("span", { text: r.data.message || (ok ? "The test mail was sent." : "The test failed.") }));
  }

  // send posts body with button marked busy, and resolves like postJSON.
  async send(button, label, url, body) {
    speak(this.result);
    this.busy = true;
    const span = button.querySelector("span");
    const was = span.textContent;
    span.textContent = label;
    this.form.setAttribute("aria-busy", "true");
    const r = await postJSON(url, body);
    span.textContent = was;
    this.form.setAttribute("aria-busy", "false");
    this.busy = false;
    return r;
  }

  // serverError shows a refusal above the form.
  serverError(r, what) {
    if (r.status === 401) return; // the page returns to the sign-in view
    speak(this.panelError, r.status === 0 ? `${what}: the server could not be reached.` : `${what}: ${r.error?.message || "server error"}`);
  }
}

// field builds one field: {name, el, control, env, set(value, envName),
// read() → {changed, value} or {error}, setError(message)}.
function field(name, kind, label, hint, attrs = {}) {
  const id = `email-${name.replace(/_/g, "-")}`;
  const hintEl = hint ? h("p", { class: "field-hint", id: `${id}-hint`, text: hint }) : null;
  const note = h("p", { class: "field-note", id: `${id}-note`, hidden: true }, icon("lock"), h("span"));
  const err = h("p", { class: "field-error", id: `${id}-err`, hidden: true });
  const describedby = [hintEl ? hintEl.id : null, note.id, err.id].filter(Boolean).join(" ");
  let control;
  let el;
  if (kind === "switch") {
    control = h("input", { type: "checkbox", role: "switch", id, class: "switch-input", "aria-describedby": describedby });
    el = h("div", { class: "field field-switch", "data-field": name },
      h("label", { class: "switch", for: id }, control, h("span", { class: "switch-label", text: label })), note, err);
  } else {
    const tag = kind === "textarea" ? "textarea" : "input";
    control = h(tag, { id, name, spellcheck: "false", autocomplete: "off", "aria-describedby": describedby, ...(tag === "input" ? { type: kind } : {}), ...attrs });
    const row = kind === "number" ? h("div", { class: "input-row" }, control, h("span", { class: "input-suffix", text: "seconds" })) : control;
    el = h("div", { class: "field", "data-field": name }, h("label", { class: "field-label", for: id, text: label }), hintEl, row, note, err);
  }
  let loaded = "";
  const value = () => {
    if (kind === "switch") return control.checked;
    if (kind === "textarea") return control.value.split(/[\n,]/).map((s) => s.trim()).filter(Boolean);
    return control.value.trim();
  };
  const f = {
    name, el, control, env: "",
    set(v, envName) {
      f.env = envName;
      if (kind === "switch") control.checked = v === true;
      else if (kind === "textarea") control.value = (v || []).join("\n");
      else control.value = v === undefined || v === null ? "" : String(v);
      if (kind === "switch") control.disabled = !!envName;
      else control.readOnly = !!envName;
      note.hidden = !envName;
      note.querySelector("span").textContent = envName ? `Set on the server by ${envName}; change it there.` : "";
      loaded = JSON.stringify(value());
      f.setError("");
    },
    read() {
      const v = value();
      if (kind === "number") {
        const n = Number(v);
        if (v === "" || control.validity.badInput || !Number.isInteger(n) || n < 0 || n > MAX_DELAY) {
          return { error: `Enter a whole number of seconds from 0 to ${MAX_DELAY} (30 days).` };
        }
        return { changed: JSON.stringify(String(n)) !== loaded, value: n };
      }
      return { changed: JSON.stringify(v) !== loaded, value: v };
    },
    setError(message) {
      err.textContent = message;
      err.hidden = !message;
      if (message) control.setAttribute("aria-invalid", "true");
      else control.removeAttribute("aria-invalid");
    },
  };
  return f;
}
