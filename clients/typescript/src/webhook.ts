// Verifying the webhooks hitl sends, as Standard Webhooks signs them, with
// the Web Crypto API (Node 18+, Deno, Bun, browsers, edge runtimes).

/** How far a delivery's timestamp may be from now, in seconds. */
export const DEFAULT_WEBHOOK_TOLERANCE = 5 * 60;

/** A delivery whose signature or timestamp does not check out. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

/** Options of {@link verifyWebhook}. */
export interface VerifyWebhookOptions {
  /** Seconds the timestamp may be from `now`; default five minutes. */
  tolerance?: number;
  /** The receiver's clock, in seconds since the epoch; default now. */
  now?: number;
}

function header(headers: Headers | Record<string, string | string[] | undefined>, name: string): string {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? "";
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? v.join(" ") : (v ?? "");
  }
  return "";
}

function fromBase64(s: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) {
    throw new WebhookVerificationError("the secret must be whsec_ followed by base64");
  }
  return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
}

function toBase64(b: ArrayBuffer): string {
  return btoa(String.fromCharCode(...new Uint8Array(b)));
}

/**
 * Checks a delivery hitl sent to a `callback_url` or a subscription:
 * `secret` is `whsec_…` (`hitl webhook secret` for callbacks, or the
 * subscription's), `headers` the request's, `body` the exact text or bytes
 * received, before parsing. One of the `v1,` signatures in
 * `webhook-signature` must be the base64 HMAC-SHA256, keyed with the
 * secret's bytes, of `"{webhook-id}.{webhook-timestamp}.{body}"`, and the
 * timestamp within the tolerance. Throws {@link WebhookVerificationError}
 * otherwise.
 */
export async function verifyWebhook(
  secret: string,
  headers: Headers | Record<string, string | string[] | undefined>,
  body: string | Uint8Array,
  opts: VerifyWebhookOptions = {},
): Promise<void> {
  const key = fromBase64(secret.trim().replace(/^whsec_/, ""));
  const id = header(headers, "webhook-id");
  const stamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !stamp || !signatures) {
    throw new WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature");
  }
  if (!/^\d+$/.test(stamp)) throw new WebhookVerificationError("webhook-timestamp is not a number");
  const now = opts.now ?? Date.now() / 1000;
  if (Math.abs(now - Number(stamp)) > (opts.tolerance ?? DEFAULT_WEBHOOK_TOLERANCE)) {
    throw new WebhookVerificationError("webhook-timestamp is too far from now");
  }
  const enc = new TextEncoder();
  const data = typeof body === "string" ? enc.encode(body) : body;
  const prefix = enc.encode(`${id}.${stamp}.`);
  const signed = new Uint8Array(prefix.length + data.length);
  signed.set(prefix);
  signed.set(data, prefix.length);
  const k = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const want = toBase64(await crypto.subtle.sign("HMAC", k, signed));
  for (const sig of signatures.split(/\s+/)) {
    const [version, value] = sig.split(",", 2);
    if (version === "v1" && value !== undefined && constantTimeEqual(value, want)) return;
  }
  throw new WebhookVerificationError("no matching signature");
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
