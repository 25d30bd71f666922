// verifyReceipt on WebCrypto, against a real server's receipts and keys.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { canonicalJSON, fetchReceiptKeys, ReceiptError, verifyReceipt, type ReceiptKeySet } from "../src/index.js";
import { Server } from "./server.js";

let server: Server;
let receipt: string;
let id: string;
let keys: ReceiptKeySet;
const args = { command: "ls", cwd: "/tmp", n: 1 };

before(async () => {
  server = await Server.start();
  const created = await server.request("POST", "/api/v1/interactions", {
    interaction_type: "action",
    source_agent: "node-test",
    action: { name: "Bash", args },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  id = created.body.interaction_id;
  const answered = await server.request("POST", `/api/v1/interactions/${id}/respond`, { value: { decision: "approve" } });
  assert.equal(answered.status, 200, JSON.stringify(answered.body));
  receipt = answered.body.result.receipt;
  assert.ok(receipt, "an approved action carries result.receipt");
  keys = await fetchReceiptKeys(server.url);
});
after(() => server.stop());

test("a receipt verifies for the call it approved", async () => {
  const claims = await verifyReceipt(receipt, keys, { interactionId: id, name: "Bash", args: { n: 1.0, cwd: "/tmp", command: "ls" } });
  assert.equal(claims.sub, id);
  assert.equal(claims.agent, "node-test");
  assert.equal(claims.approved_by, "local");
});

test("each way a receipt does not hold says why", async () => {
  const [h, p] = receipt.split(".");
  const cases: Array<[string, () => Promise<unknown>, RegExp]> = [
    ["other args", () => verifyReceipt(receipt, keys, { args: { command: "rm -rf /", cwd: "/tmp", n: 1 } }), /other args/],
    ["another tool", () => verifyReceipt(receipt, keys, { name: "Write" }), /for tool "Bash", not "Write"/],
    ["expired", () => verifyReceipt(receipt, keys, { now: Math.floor(Date.now() / 1000) + 2 * 3600 }), /expired at/],
    ["forged signature", () => verifyReceipt(`${h}.${p}.${"A".repeat(86)}`, keys), /forged or altered/],
    ["rotated out", () => verifyReceipt(receipt, { keys: [] }), /not published \(rotated out/],
    ["garbage", () => verifyReceipt("nope", keys), /not a compact JWS/],
  ];
  for (const [name, p, why] of cases) {
    await assert.rejects(p(), (err: unknown) => err instanceof ReceiptError && why.test(err.message), name);
  }
});

test("canonicalJSON is RFC 8785", () => {
  assert.equal(canonicalJSON({ b: [1.0, "é\u2028"], a: { d: null, c: true } }), '{"a":{"c":true,"d":null},"b":[1,"é\u2028"]}');
});
