// What the header's settings buttons (Slack, Email) share: the button
// shows only when the server lets the caller change those settings, it
// opens the dialog, and closing the dialog gives the focus back to it.

import { getJSON } from "./api.js";

// SettingsDialog is a settings button and its dialog; url is the settings'
// endpoint, which answers the caller who may change them. A subclass
// supplies open().
export class SettingsDialog {
  constructor(button, dialog, url) {
    this.button = button;
    this.dialog = dialog;
    this.url = url;
    this.busy = false;
    this.gen = 0;
    button.addEventListener("click", () => this.open());
    dialog.addEventListener("close", () => {
      if (!this.button.hidden) this.button.focus();
    });
  }

  // probe shows the button when the caller may change the settings and
  // the server runs the channel.
  async probe() {
    const gen = ++this.gen;
    const r = await getJSON(this.url);
    if (gen !== this.gen) return;
    this.button.hidden = !r.ok;
  }

  // hide hides the button and closes the dialog (signing out).
  hide() {
    this.gen++;
    this.button.hidden = true;
    if (this.dialog.open) this.dialog.close();
  }
}
