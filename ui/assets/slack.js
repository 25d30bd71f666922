// The Slack settings dialog, for admins: the human_feedback contract's
// "Slack icon → enter tokens and channel ID → Test connection → Save", over
// GET/POST /api/human-feedback/slack/config and POST …/slack/test.
//
// Secrets never come back from the server in full (it masks them as
// "xoxb-...1234"), and this page never shows or resends a saved one: a
// secret field is empty unless a new value is typed, and only typed values
// (or an explicit removal) are sent. Fields set on the server by flags or
// HITL_SLACK_* variables are shown read-only and never sent.

import { h, icon, speak } from "./dom.js";
import { getJSON, postJSON } from "./api.js";
import { SettingsDialog } from "./settingsdialog.js";

const CONFIG_URL = "/api/human-feedback/slack/config";
const TEST_URL = "/api/human-feedback/slack/test";

// What the server accepts (slack/config.go, hitl.ValidSlackChannelID).
const MAX_DELAY = 30 * 24 * 3600;
const CHANNEL_ID = /^[CGD][A-Z0-9]{2,63}$/;

// ENV names the server's variable for each field.
const ENV = {
  enabled: "HITL_SLACK_ENABLED",
  bot_token: "HITL_SLACK_BOT_TOKEN",
  app_token: "HITL_SLACK_APP_TOKEN",
  signing_secret: "HITL_SLACK_SIGNING_SECRET",
  channel_id: "HITL_SLACK_CHANNEL_ID",
  delay_seconds: "HITL_SLACK_DELAY_SECONDS",
  mention: "HITL_SLACK_MENTION",
  unmapped_users: "HITL_SLACK_UNMAPPED_USERS",
};

const LABELS = {
  enabled: "Slack",
  bot_token: "Bot token",
  app_token: "App-level token",
  signing_secret: "Signing secret",
  channel_id: "Channel ID",
  delay_seconds: "Delay",
  mention: "Mention",
  unmapped_users: "Answers from unknown Slack users",
};

// SlackSettings is the header's Slack button and the dialog it opens.
export class SlackSettings extends SettingsDialog {
  // hooks: {announce(text)}
  constructor(button, dialog, hooks) {
    super(button, dialog, CONFIG_URL);
    this.hooks = hooks;
    this.fields = {};
    this.build();
    button.prepend(icon("slack"));
  }

  build() {
    const f = this.fields;
    this.state = h("p", { class: "slack-state", id: "slack-state" }, h("span", { class: "state-dot", "aria-hidden": "true" }), h("span", { class: "state-text" }));
    this.panelError = h("p", { class: "notice notice-error", id: "slack-error", role: "alert" });

    f.enabled = switchField("enabled", "Post unanswered questions to Slack");
    f.bot_token = secretField("bot_token", "Bot token", "xoxb-",
      "Starts with xoxb-: the app's OAuth & Permissions page. It needs chat:write, channels:history, users:read and users:read.email.");
    f.app_token = secretField("app_token", "App-level token", "xapp-",
      "Starts with xapp-, with the connections:write scope: Slack reaches hitl over Socket Mode, with no public URL.");
    f.signing_secret = secretField("signing_secret", "Signing secret", "",
      "Instead of an app token: Slack reaches hitl over HTTP at /slack/events and /slack/interactivity, and hitl checks each request's signature.");
    f.channel_id = textField("channel_id", "Channel ID", "Such as C0123ABCD: in Slack, the channel's details, at the bottom. Invite the app to the channel first.", {
      autocapitalize: "characters", placeholder: "C0123ABCD", class: "input input-mono input-channel",
    });
    f.delay_seconds = textField("delay_seconds", "Delay before posting", "How long a question waits unanswered before it is posted; 0 posts at once.", {
      type: "number", inputmode: "numeric", min: 0, max: MAX_DELAY, step: 1, class: "input input-number",
    }, "seconds");
    f.mention = radioField("mention", "Mention in each message", [
      ["none", "No one"], ["here", "@here", "members who are active"], ["channel", "@channel", "everyone in the channel"],
    ]);
    f.unmapped_users = selectField("unmapped_users", "Slack users with no hitl account may answer", [
      ["untargeted", "Questions meant for anyone"], ["none", "Nothing"],
    ], "A Slack user is matched to the hitl user with the same email, and may answer what that user may.");

    this.result = h("p", { class: "dialog-result", id: "slack-result", role: "status" });
    this.testBtn = h("button", { type: "button", class: "btn btn-secondary", id: "slack-test", onclick: () => this.test() },
      icon("send"), h("span", { text: "Test connection" }));
    this.saveBtn = h("button", { type: "submit", class: "btn btn-primary", id: "slack-save" }, icon("check"), h("span", { text: "Save" }));
    this.body = h("fieldset", { class: "dialog-fields" },
      h("legend", { class: "sr-only", text: "Slack settings" }),
      f.enabled.el,
      h("fieldset", { class: "group" }, h("legend", { class: "field-label", text: "Slack app" }),
        h("div", { class: "fields" }, f.bot_token.el, f.app_token.el, f.signing_secret.el)),
      h("fieldset", { class: "group" }, h("legend", { class: "field-label", text: "Messages" }),
        h("div", { class: "fields" }, f.channel_id.el, f.delay_seconds.el, f.mention.el, f.unmapped_users.el)));
    this.form = h("form", { class: "dialog-form", novalidate: true, onsubmit: (e) => { e.preventDefault(); this.save(); } },
      h("header", { class: "dialog-head" },
        h("div", { class: "dialog-titles" },
          h("h2", { id: "slack-title", class: "dialog-title" }, icon("slack"), h("span", { text: "Slack" })),
          h("p", { class: "dialog-sub", id: "slack-desc", text: "Questions still unanswered after the delay are posted to a Slack channel, where people answer with buttons or a thread reply." })),
        h("button", { type: "button", class: "btn btn-quiet btn-icon", id: "slack-close", "aria-label": "Close", onclick: () => this.dialog.close() }, icon("x"))),
      h("div", { class: "dialog-body" }, this.state, this.panelError, this.body),
      h("footer", { class: "dialog-foot" }, this.result, h("div", { class: "dialog-actions" }, this.testBtn, this.saveBtn)));
    this.dialog.setAttribute("aria-describedby", "slack-desc");
    this.dialog.append(this.form);
    this.form.addEventListener("input", (e) => {
      const name = e.target.closest("[data-field]")?.dataset.field;
      if (name) this.fields[name].setError("");
    });
  }

  async open() {
    if (this.dialog.open || this.busy || this.opening) return;
    this.opening = true;
    this.button.setAttribute("aria-busy", "true");
    const r = await getJSON(CONFIG_URL);
    this.button.removeAttribute("aria-busy");
    this.opening = false;
    if (this.button.hidden) return; // signed out meanwhile
    this.clearMessages();
    if (r.ok) {
      this.fill(r.data);
      this.body.disabled = false;
    } else {
      this.body.disabled = true;
      speak(this.panelError, r.status === 403
        ? "Only admins may see or change the Slack settings."
        : `The Slack settings could not be loaded: ${r.error?.message || "server error"}.`);
    }
    this.dialog.showModal();
    const first = r.ok ? this.body.querySelector("input:not([disabled]):not([readonly]), select:not([disabled])") : null;
    (first || this.dialog.querySelector("#slack-close")).focus();
  }

  // fill shows a configuration as the server returned it.
  fill(view) {
    this.view = view;
    const env = new Set(view.from_environment || []);
    for (const [name, field] of Object.entries(this.fields)) {
      field.set(view[name], env.has(name) ? ENV[name] : "");
      field.setError("");
    }
    const st = stateOf(view);
    this.state.dataset.state = st.kind;
    this.state.querySelector(".state-text").textContent = st.text;
  }

  clearMessages() {
    speak(this.panelError);
    speak(this.result);
    for (const f of Object.values(this.fields)) f.setError("");
  }

  // read collects what to send: only fields not set by the environment,
  // and of the secrets only new values or removals. checkEnable adds the
  // check that Slack, when on, has a bot token and a channel.
  read(checkEnable) {
    const f = this.fields;
    const body = {};
    const errors = [];
    for (const field of Object.values(f)) {
      if (field.env) continue;
      const r = field.read();
      if (r.error) errors.push([field, r.error]);
      else if (r.send) body[field.name] = r.value;
    }
    if (checkEnable && !f.enabled.env && body.enabled) {
      if (!f.bot_token.has()) errors.push([f.bot_token, "Slack needs a bot token to be on."]);
      if (!f.channel_id.has()) errors.push([f.channel_id, "Slack needs a channel ID to be on."]);
    }
    return { body, errors };
  }

  // check shows the page's own errors; it reports whether there were none.
  check(errors) {
    for (const [field, message] of errors) field.setError(message);
    if (errors.length === 0) return true;
    speak(this.result, icon("alert"), h("span", { text: errors.length === 1 ? "One field needs attention." : `${errors.length} fields need attention.` }));
    this.result.dataset.kind = "error";
    errors[0][0].focusable().focus();
    return false;
  }

  async save() {
    if (this.busy) return;
    this.clearMessages();
    const { body, errors } = this.read(true);
    if (!this.check(errors)) return;
    this.setBusy(this.saveBtn, "Saving…");
    const r = await postJSON(CONFIG_URL, body);
    this.setBusy(null);
    if (!r.ok) {
      this.serverError(r, "The settings were not saved");
      return;
    }
    this.fill(r.data);
    this.result.dataset.kind = "ok";
    speak(this.result, icon("check"), h("span", { text: `Saved. Slack is ${r.data.enabled ? "on" : "off"}.` }));
  }

  async test() {
    if (this.busy) return;
    this.clearMessages();
    const { body, errors } = this.read(false);
    if (!this.check(errors)) return;
    this.setBusy(this.testBtn, "Testing…");
    const r = await postJSON(TEST_URL, body);
    this.setBusy(null);
    if (!r.ok) {
      this.serverError(r, "The test could not run");
      return;
    }
    const ok = r.data.success === true;
    this.result.dataset.kind = ok ? "ok" : "error";
    speak(this.result, icon(ok ? "check" : "alert"), h("span", { text: r.data.message || (ok ? "Slack connection test successful!" : "The test failed.") }));
  }

  // serverError shows a refusal at the field it names ("channel_id must
  // be …"), else above the form.
  serverError(r, what) {
    if (r.status === 401) return; // the page returns to the sign-in view
    const message = r.error?.message || "server error";
    const m = /^([a-z_]+) (.*)$/s.exec(message);
    const field = m && this.fields[m[1]];
    if (field && !field.env) {
      field.setError(`${LABELS[field.name]} ${m[2]}`);
      field.focusable().focus();
      this.result.dataset.kind = "error";
      speak(this.result, icon("alert"), h("span", { text: `${what}: see ${LABELS[field.name]}.` }));
      return;
    }
    speak(this.panelError, r.status === 0 ? `${what}: the server could not be reached.` : `${what}: ${message}`);
    this.panelError.scrollIntoView({ block: "nearest" });
  }

  // setBusy marks a request in flight on button (null: none). The buttons
  // stay enabled, so focus stays where it is; a second press is ignored.
  setBusy(button, label) {
    this.busy = !!button;
    this.form.setAttribute("aria-busy", this.busy ? "true" : "false");
    for (const b of [this.testBtn, this.saveBtn]) {
      const span = b.querySelector("span");
      b.dataset.label ??= span.textContent;
      span.textContent = b === button ? label : b.dataset.label;
    }
  }
}

// stateOf says in a few words whether Slack is on and how it reaches hitl.
function stateOf(v) {
  if (!v.enabled) return { kind: "off", text: "Off: questions stay in the web inbox." };
  switch (v.transport) {
    case "socket_mode":
      return v.connected
        ? { kind: "on", text: "On, connected over Socket Mode." }
        : { kind: "warn", text: "On; Socket Mode is not connected (yet)." };
    case "http":
      return { kind: "on", text: "On; Slack reaches hitl over HTTP." };
    default:
      return { kind: "warn", text: "On, posting only: without an app token or a signing secret, answers given in Slack are not heard." };
  }
}

// The fields. Each is {name, el, env, set(value, envName), read(),
// setError(message), focusable(), has()}; read returns {send, value} or
// {error}.

function fieldID(name) {
  return `slack-${name.replace(/_/g, "-")}`;
}

// parts builds the hint, the environment note and the error of a field,
// and the ids that describe its control.
function parts(name, hintText) {
  const id = fieldID(name);
  const hint = hintText ? h("p", { class: "field-hint", id: `${id}-hint`, text: hintText }) : null;
  const note = h("p", { class: "field-note", id: `${id}-note`, hidden: true }, icon("lock"), h("span"));
  const err = h("p", { class: "field-error", id: `${id}-err`, hidden: true });
  return { id, hint, note, err, describedby: [hint ? `${id}-hint` : null, `${id}-note`, `${id}-err`].filter(Boolean).join(" ") };
}

// base is what every field shares: errors and the environment note.
function base(name, p, controls) {
  return {
    name,
    env: "",
    setError(message) {
      p.err.textContent = message;
      p.err.hidden = !message;
      for (const c of controls()) {
        if (message) c.setAttribute("aria-invalid", "true");
        else c.removeAttribute("aria-invalid");
      }
    },
    setEnv(envName) {
      this.env = envName;
      p.note.hidden = !envName;
      p.note.querySelector("span").textContent = envName ? `Set on the server by ${envName}; change it there.` : "";
    },
    focusable: () => controls()[0],
  };
}

function switchField(name, label) {
  const p = parts(name, "");
  const input = h("input", { type: "checkbox", role: "switch", id: p.id, class: "switch-input", "aria-describedby": p.describedby });
  const el = h("div", { class: "field field-switch", "data-field": name },
    h("label", { class: "switch", for: p.id }, input, h("span", { class: "switch-label", text: label })),
    p.note, p.err);
  const f = base(name, p, () => [input]);
  return Object.assign(f, {
    el,
    set(value, envName) {
      input.checked = value === true;
      input.disabled = !!envName;
      f.setEnv(envName);
    },
    read: () => ({ send: true, value: input.checked }),
  });
}

function textField(name, label, hintText, attrs, suffix) {
  const p = parts(name, hintText);
  const input = h("input", { type: "text", id: p.id, name, autocomplete: "off", spellcheck: "false", "aria-describedby": p.describedby, ...attrs });
  const control = suffix ? h("div", { class: "input-row" }, input, h("span", { class: "input-suffix", text: suffix })) : input;
  const el = h("div", { class: "field", "data-field": name }, h("label", { class: "field-label", for: p.id, text: label }), p.hint, control, p.note, p.err);
  const f = base(name, p, () => [input]);
  const number = attrs.type === "number";
  return Object.assign(f, {
    el,
    set(value, envName) {
      input.value = value === undefined || value === null ? "" : String(value);
      input.readOnly = !!envName;
      f.setEnv(envName);
    },
    has: () => !!f.env || input.value.trim() !== "",
    read() {
      const v = input.value.trim();
      if (number) {
        if (v === "" || input.validity.badInput) return { error: "Enter a number of seconds (0 posts at once)." };
        const n = Number(v);
        if (!Number.isInteger(n) || n < 0 || n > MAX_DELAY) return { error: `Enter a whole number of seconds from 0 to ${MAX_DELAY} (30 days).` };
        return { send: true, value: n };
      }
      if (name === "channel_id" && v !== "" && !CHANNEL_ID.test(v)) {
        return { error: "Use the channel's ID, such as C0123ABCD (not its name): in Slack, the channel's details, at the bottom." };
      }
      return { send: true, value: v };
    },
  });
}

// secretField is a token or secret: empty unless a new value is typed;
// the saved one is named by its mask and can be removed.
function secretField(name, label, prefix, hintText) {
  const p = parts(name, hintText);
  let saved = "";
  let remove = false;
  const input = h("input", {
    type: "password", id: p.id, name, class: "input input-mono", autocomplete: "off", spellcheck: "false",
    autocapitalize: "none", "aria-describedby": `${p.id}-saved ${p.describedby}`,
  });
  const savedText = h("span", { class: "secret-saved-text", id: `${p.id}-saved` });
  const toggle = h("button", { type: "button", class: "btn-link", id: `${p.id}-remove` });
  const savedLine = h("p", { class: "secret-saved", hidden: true }, icon("lock"), savedText, toggle);
  const el = h("div", { class: "field", "data-field": name },
    h("label", { class: "field-label", for: p.id, text: label }), p.hint, input, savedLine, p.note, p.err);
  const f = base(name, p, () => [input]);
  const render = () => {
    // Hidden, it says nothing: aria-describedby reads hidden text too.
    savedLine.hidden = !saved || !!f.env;
    savedText.textContent = savedLine.hidden ? "" : remove ? `${saved} will be removed when you save.` : `Saved: ${saved}`;
    toggle.textContent = remove ? "Keep it" : "Remove";
    toggle.setAttribute("aria-label", remove ? `Keep the saved ${label.toLowerCase()}` : `Remove the saved ${label.toLowerCase()}`);
    input.placeholder = f.env ? "" : saved && !remove ? "Saved (type a new one to replace it)" : prefix ? `${prefix}…` : "";
  };
  toggle.addEventListener("click", () => {
    remove = !remove;
    if (remove) input.value = "";
    render();
  });
  input.addEventListener("input", () => {
    if (remove && input.value !== "") {
      remove = false;
      render();
    }
  });
  return Object.assign(f, {
    el,
    set(value, envName) {
      f.setEnv(envName);
      saved = typeof value === "string" ? value : "";
      remove = false;
      // From the environment: the mask, read-only, as text (a password
      // field would hide even the mask). Otherwise empty.
      input.type = envName ? "text" : "password";
      input.readOnly = !!envName;
      input.value = envName ? saved : "";
      render();
    },
    has: () => !!f.env || input.value.trim() !== "" || (!!saved && !remove),
    read() {
      const v = input.value.trim();
      if (v !== "") {
        if (prefix && !v.startsWith(prefix)) return { error: `${label} starts with ${prefix}` };
        if (/\s/.test(v)) return { error: `${label} has no spaces; paste it again.` };
        return { send: true, value: v };
      }
      if (remove) return { send: true, value: "" };
      return { send: false };
    },
  });
}

function radioField(name, legend, choices) {
  const p = parts(name, "");
  const inputs = [];
  const items = choices.map(([value, label, hint]) => {
    const input = h("input", { type: "radio", name: `slack-${name}`, value, id: `${p.id}-${value}` });
    inputs.push(input);
    return h("label", { class: "check", for: input.id }, input, h("span", {}, label, hint ? h("span", { class: "check-hint", text: ` (${hint})` }) : null));
  });
  const el = h("fieldset", { class: "field field-radios", "data-field": name, "aria-describedby": p.describedby },
    h("legend", { class: "field-label", text: legend }), h("div", { class: "checks" }, items), p.note, p.err);
  const f = base(name, p, () => inputs);
  f.focusable = () => inputs.find((i) => i.checked) || inputs[0];
  return Object.assign(f, {
    el,
    set(value, envName) {
      for (const i of inputs) {
        i.checked = i.value === (value || "none");
        i.disabled = !!envName;
      }
      f.setEnv(envName);
    },
    read: () => ({ send: true, value: (inputs.find((i) => i.checked) || inputs[0]).value }),
  });
}

function selectField(name, label, choices, hintText) {
  const p = parts(name, hintText);
  const select = h("select", { id: p.id, name, class: "input", "aria-describedby": p.describedby },
    choices.map(([value, text]) => h("option", { value, text })));
  const el = h("div", { class: "field", "data-field": name }, h("label", { class: "field-label", for: p.id, text: label }), p.hint, select, p.note, p.err);
  const f = base(name, p, () => [select]);
  return Object.assign(f, {
    el,
    set(value, envName) {
      select.value = value || choices[0][0];
      select.disabled = !!envName;
      f.setEnv(envName);
    },
    read: () => ({ send: true, value: select.value }),
  });
}
