// What became of a question a link named that is not open in the inbox,
// said in one sentence for the inbox's notice.

import { getInteraction } from "./api.js";
import { channelName } from "./format.js";

// fateText fetches interaction id and says what became of it; expired
// tells that the page saw its deadline pass.
export async function fateText(id, expired) {
  const r = await getInteraction(id);
  if (!r.ok) return r.status === 404 ? "That question was not found." : "That question could not be loaded.";
  const it = r.data;
  const res = it.result || {};
  switch (it.status) {
    case "answered":
      return res.timed_out
        ? "That question reached its deadline, so the default answer was used."
        : `That question was answered by ${res.responded_by || "someone"} via ${channelName(res.channel)}.`;
    case "expired":
      return "That question expired.";
    case "cancelled":
      return "That question was cancelled.";
    default:
      return expired ? "That question expired." : "That question is not in your inbox.";
  }
}
