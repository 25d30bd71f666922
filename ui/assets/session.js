// Who is signed in, and the sign-in view. The server says who the caller
// is at GET /api/v1/auth/me: 200 with {name, role, groups, local_mode,
// auth}, or 401 when credentials are needed. Signing in sets an HttpOnly
// session cookie; the page never sees a secret.

import { speak } from "./dom.js";
import { requestJSON } from "./api.js";

// me asks the server who the caller is; it resolves like requestJSON.
export function me() {
  return requestJSON("GET", "/api/v1/auth/me", undefined, { quiet: true });
}

// logout ends the session (the server clears the cookie).
export function logout() {
  return requestJSON("POST", "/api/v1/auth/logout", undefined, { quiet: true });
}

// methods asks how people may sign in: {password, sign_on: {name, url}}.
function methods() {
  return requestJSON("GET", "/api/v1/auth/methods", undefined, { quiet: true });
}

function login(username, password) {
  return requestJSON("POST", "/api/v1/auth/login", { username, password }, { quiet: true });
}

// waitText says how long to wait, for a person: "12 seconds", "3 minutes".
export function waitText(seconds) {
  const s = Math.max(1, Math.ceil(seconds));
  if (s < 90) return s === 1 ? "1 second" : `${s} seconds`;
  const min = Math.ceil(s / 60);
  return `${min} minutes`;
}

// SignIn is the sign-in view: a form that posts to the login API, shows
// what went wrong at the field or above the form (announced), and calls
// signedIn(me) once the server has set the session cookie.
export class SignIn {
  // els: {view, form, username, password, submit, notice, error, retry,
  // help, signOn}; hooks: {signedIn(me), retry()}
  constructor(els, hooks) {
    this.els = els;
    this.hooks = hooks;
    this.busy = false;
    this.retryAt = 0; // while rate-limited: when the server accepts again (ms)
    els.form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.submit();
    });
    els.retry.addEventListener("click", () => hooks.retry());
    for (const input of [els.username, els.password]) {
      input.addEventListener("input", () => this.fieldError(input, ""));
    }
  }

  // show shows the form. notice is an optional calm message (signed out,
  // session ended); focus moves to the first empty field when asked.
  show({ notice = "", focus = true } = {}) {
    const { view, form, retry, help, password } = this.els;
    view.hidden = false;
    form.hidden = false;
    help.hidden = false;
    retry.hidden = true;
    password.value = "";
    this.setError("");
    this.setNotice(notice);
    this.fieldError(this.els.username, "");
    this.fieldError(password, "");
    this.setBusy(false);
    if (focus) (this.els.username.value ? password : this.els.username).focus();
    this.offerMethods(focus);
  }

  // offerMethods shows "Sign in with <provider>" when the server has an
  // OpenID provider, and hides the password form when it takes none.
  async offerMethods(focus) {
    const r = await methods();
    const { view, form, help, signOn } = this.els;
    if (!r.ok || view.hidden || form.hidden) return;
    const so = r.data.sign_on;
    if (so) {
      signOn.href = `${so.url}?next=${encodeURIComponent(location.pathname + location.search)}`;
      signOn.textContent = `Sign in with ${so.name}`;
      signOn.hidden = false;
    }
    if (so && !r.data.password) {
      form.hidden = true;
      help.hidden = true;
      if (focus) signOn.focus();
    }
  }

  // problem shows why the page cannot go on (the server cannot be
  // reached, or refuses this address), with a Try again button.
  problem(message) {
    const { view, form, retry, help, signOn } = this.els;
    view.hidden = false;
    form.hidden = true;
    signOn.hidden = true;
    help.hidden = true;
    retry.hidden = false;
    this.setNotice("");
    this.setError(message);
  }

  hide() {
    this.els.view.hidden = true;
    this.els.password.value = "";
    this.setError("");
    this.setNotice("");
  }

  async submit() {
    if (this.busy) return;
    const { username, password } = this.els;
    this.setError("");
    const name = username.value.trim();
    let first = null;
    if (name === "") {
      this.fieldError(username, "Enter your username.");
      first = username;
    }
    if (password.value === "") {
      this.fieldError(password, "Enter your password.");
      first ??= password;
    }
    if (first) {
      first.focus();
      return;
    }
    const wait = (this.retryAt - Date.now()) / 1000;
    if (wait > 0) {
      this.setError(`Too many sign-in attempts from this address. Try again in ${waitText(wait)}.`);
      return;
    }
    this.setBusy(true);
    const r = await login(name, password.value);
    this.setBusy(false);
    if (r.ok) {
      password.value = "";
      this.hooks.signedIn(r.data);
      return;
    }
    switch (r.status) {
      case 401:
        this.setError("Wrong username or password.");
        password.value = "";
        password.focus();
        return;
      case 429: {
        const secs = r.retryAfter || 60;
        this.retryAt = Date.now() + secs * 1000;
        this.setError(`Too many sign-in attempts from this address. Try again in ${waitText(secs)}.`);
        return;
      }
      case 0:
        this.setError("The server could not be reached. Check the connection and try again.");
        return;
      default:
        this.setError(r.error?.message ? `Could not sign in: ${r.error.message}` : "Could not sign in.");
    }
  }

  setBusy(busy) {
    this.busy = busy;
    this.els.form.setAttribute("aria-busy", busy ? "true" : "false");
    this.els.submit.textContent = busy ? "Signing in…" : "Sign in";
  }

  // setError shows message in the alert region above the form; the region
  // stays in the page (empty when there is nothing to say), so screen
  // readers announce each new message.
  setError(message) {
    speak(this.els.error, message);
  }

  setNotice(message) {
    speak(this.els.notice, message);
  }

  fieldError(input, message) {
    const err = document.getElementById(`${input.id}-err`);
    err.textContent = message;
    err.hidden = !message;
    if (message) input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
  }
}

