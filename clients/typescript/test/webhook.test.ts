// verifyWebhook, against the Standard Webhooks reference example.

import assert from "node:assert/strict";
import { test } from "node:test";

import { verifyWebhook, WebhookVerificationError } from "../src/index.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const STAMP = 1614265330;
const BODY = '{"test": 2432232314}';
const SIG = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

function headers(sig = SIG, id = ID, stamp = String(STAMP)): Record<string, string> {
  return { "Webhook-Id": id, "Webhook-Timestamp": stamp, "Webhook-Signature": sig };
}

test("a valid delivery verifies", async () => {
  await verifyWebhook(SECRET, headers(), BODY, { now: STAMP + 10 });
  await verifyWebhook(SECRET, new Headers(headers("v2,abc " + SIG)), new TextEncoder().encode(BODY), { now: STAMP });
});

test("altered or stale deliveries are refused", async () => {
  const cases: Array<[Record<string, string>, string, number]> = [
    [headers(), '{"test": 2432232315}', STAMP],
    [headers(SIG, "msg_other"), BODY, STAMP],
    [headers(SIG.replace("v1,", "v2,")), BODY, STAMP],
    [headers(""), BODY, STAMP],
    [headers(SIG, ID, "soon"), BODY, STAMP],
    [headers(), BODY, STAMP + 6 * 60],
  ];
  for (const [h, body, now] of cases) {
    await assert.rejects(verifyWebhook(SECRET, h, body, { now }), WebhookVerificationError);
  }
  await assert.rejects(verifyWebhook("whsec_not base64!", headers(), BODY, { now: STAMP }), WebhookVerificationError);
});
