// Webhook deliveries in the detail view, for admins: each POST of the
// question's events to a webhook (its callback_url or a subscription),
// with its attempts, last status or error, next retry and when it was
// delivered, from GET /api/v1/interactions/{id}/deliveries. People who
// may not see deliveries (not admins), and servers without webhooks, get
// no section.

import { h } from "./dom.js";
import { getJSON } from "./api.js";

const clock = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

const STATES = { pending: "Waiting to retry", sending: "Sending", delivered: "Delivered", failed: "Failed" };

// loadDeliveries returns the interaction's deliveries, newest first, or
// null when there are none to show.
export async function loadDeliveries(id) {
  const r = await getJSON(`/api/v1/interactions/${encodeURIComponent(id)}/deliveries`);
  if (!r.ok || !Array.isArray(r.data?.deliveries) || r.data.deliveries.length === 0) return null;
  return r.data.deliveries;
}

// deliveriesSection renders deliveries (null: nothing).
export function deliveriesSection(deliveries) {
  if (!deliveries) return null;
  const id = "detail-deliveries-title";
  const head = h("tr", {}, ["Webhook", "Event", "State", "Attempts", "Last result", "Next retry", "Delivered"].map((t) => h("th", { scope: "col", text: t })));
  return h("section", { class: "detail-section detail-deliveries", "aria-labelledby": id },
    h("h2", { id, class: "detail-h2", text: "Webhook deliveries" }),
    h("div", { class: "deliveries-scroll", tabindex: "0" },
      h("table", { class: "deliveries" }, h("thead", {}, head), h("tbody", {}, deliveries.map(row)))));
}

// row is one delivery.
function row(d) {
  const last = (d.history || []).at(-1);
  return h("tr", { "data-id": d.id, "data-state": d.state },
    h("td", { class: "delivery-url" }, h("span", { class: "mono", text: d.url }),
      h("span", { class: "delivery-kind", text: d.subscription_id ? "subscription" : "callback_url" })),
    h("td", { class: "mono", text: d.event }),
    h("td", {}, h("span", { class: "delivery-state", "data-state": d.state, text: STATES[d.state] || d.state })),
    h("td", { class: "num", text: String(d.attempts) }),
    h("td", { class: "delivery-last", text: lastText(last) }),
    h("td", {}, when(d.next_attempt_at)),
    h("td", {}, when(d.delivered_at)));
}

// lastText says how the last attempt went: its status, else its error.
function lastText(a) {
  if (!a) return "Not tried yet";
  if (a.error) return a.status_code ? `${a.status_code}: ${a.error}` : a.error;
  return a.status_code ? `${a.status_code} OK` : "OK";
}

function when(iso) {
  if (!iso) return h("span", { class: "h-meta", text: "—" });
  const d = new Date(iso);
  return h("time", { datetime: d.toISOString(), text: clock.format(d) });
}
