// The list API's filters, as History and the detail view use them:
// GET /api/v1/interactions with status, agent, type, channel, q,
// session_id, sort, limit and cursor; and GET /api/v1/interactions/counts.

import { getJSON } from "./api.js";

// listPage fetches one page of interactions matching f, newest first
// unless f.sort says otherwise. Empty filters are left out.
export function listPage(f = {}) {
  return getJSON(`/api/v1/interactions?${query(f)}`);
}

// countsOf fetches the counts of the interactions matching f (total, by
// agent, by type).
export function countsOf(f = {}) {
  return getJSON(`/api/v1/interactions/counts?${query(f)}`);
}

function query(f) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(f)) {
    for (const x of Array.isArray(v) ? v : [v]) {
      if (x !== "" && x !== null && x !== undefined) q.append(k, String(x));
    }
  }
  return q;
}
