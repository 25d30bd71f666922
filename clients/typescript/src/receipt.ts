/**
 * Verifying the signed receipts hitl issues for approved actions
 * (`result.receipt`): a compact JWS (EdDSA, Ed25519) binding the
 * interaction, the agent, the tool and the SHA-256 of the approved
 * arguments. It runs on the platform's WebCrypto (Node 20+, current
 * browsers, Deno, Bun): no dependency. See docs/receipts.md.
 *
 * ```ts
 * import { fetchReceiptKeys, verifyReceipt } from "@hitl/client";
 *
 * const keys = await fetchReceiptKeys("http://127.0.0.1:7878");
 * const claims = await verifyReceipt(receipt, keys, { name: "Bash", args }); // throws ReceiptError
 * ```
 * @module
 */

/** What a receipt binds. */
export interface ReceiptClaims {
  iss: string;
  /** The interaction id. */
  sub: string;
  agent: string;
  kind?: string;
  name: string;
  /** Hex SHA-256 of the canonical JSON (RFC 8785) of the approved arguments. */
  args_sha256: string;
  /** The person, `rule:<id>`, or `timeout`. */
  approved_by: string;
  /** Unix seconds. */
  iat: number;
  /** Unix seconds. */
  exp: number;
}

/** What a receipt must stand for; fields left out are not checked. */
export interface ReceiptExpectation {
  /** The arguments about to be run. */
  args?: unknown;
  interactionId?: string;
  kind?: string;
  name?: string;
  /** The time to check expiry at, in Unix seconds; now by default. */
  now?: number;
}

/** An Ed25519 JSON Web Key, as GET /.well-known/jwks.json lists them. */
export interface ReceiptKey {
  kty: string;
  crv?: string;
  x?: string;
  kid?: string;
  alg?: string;
}

/** The key set receipts verify with. */
export interface ReceiptKeySet {
  keys: ReceiptKey[];
}

/** Thrown when a receipt does not hold; `message` says why. */
export class ReceiptError extends Error {
  override name = "ReceiptError";
}

/** Fetches the server's published receipt keys (GET /.well-known/jwks.json). */
export async function fetchReceiptKeys(url: string, init?: RequestInit): Promise<ReceiptKeySet> {
  const res = await fetch(url.replace(/\/+$/, "") + "/.well-known/jwks.json", init);
  if (!res.ok) throw new Error(`hitl: GET /.well-known/jwks.json: ${res.status}`);
  return (await res.json()) as ReceiptKeySet;
}

/**
 * Checks a receipt: its signature against `keys`, its expiry, and that it
 * stands for the call `expect` describes. Returns its claims, or throws a
 * {@link ReceiptError} saying why it does not hold.
 */
export async function verifyReceipt(token: string, keys: ReceiptKeySet, expect: ReceiptExpectation = {}): Promise<ReceiptClaims> {
  const parts = (token ?? "").trim().split(".");
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]*$/.test(p))) {
    throw new ReceiptError("receipt is not a compact JWS");
  }
  const [h, p, s] = parts as [string, string, string];
  let header: { alg?: string; kid?: string; crit?: unknown };
  let claims: ReceiptClaims;
  try {
    header = JSON.parse(utf8(fromBase64Url(h)));
    claims = JSON.parse(utf8(fromBase64Url(p)));
  } catch {
    throw new ReceiptError("receipt is not a compact JWS");
  }
  if (header.alg !== "EdDSA" || header.crit !== undefined) throw new ReceiptError("receipt is not a compact JWS signed with EdDSA");
  const jwk = keys.keys.find((k) => k.kid !== undefined && k.kid === header.kid);
  if (!header.kid || !jwk || jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || !jwk.x) {
    throw new ReceiptError(`receipt is signed with key "${header.kid ?? ""}", which is not published (rotated out, or not this server's)`);
  }
  const key = await crypto.subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x: jwk.x }, { name: "Ed25519" }, false, ["verify"]);
  const ok = await crypto.subtle.verify({ name: "Ed25519" }, key, fromBase64Url(s), new TextEncoder().encode(`${h}.${p}`));
  if (!ok) throw new ReceiptError(`receipt signature does not verify with key "${header.kid}": it was forged or altered`);
  if (typeof claims !== "object" || !claims || !claims.sub || !claims.name || !claims.args_sha256) {
    throw new ReceiptError("receipt lacks its interaction, tool or arguments");
  }
  const now = expect.now ?? Math.floor(Date.now() / 1000);
  if (!claims.exp || now >= claims.exp) throw new ReceiptError(`receipt expired at ${new Date(claims.exp * 1000).toISOString()}`);
  if (expect.interactionId !== undefined && expect.interactionId !== claims.sub) {
    throw new ReceiptError(`receipt is for interaction ${claims.sub}, not ${expect.interactionId}`);
  }
  if (expect.name !== undefined && expect.name !== claims.name) throw new ReceiptError(`receipt is for tool "${claims.name}", not "${expect.name}"`);
  if (expect.kind !== undefined && expect.kind !== (claims.kind ?? "")) throw new ReceiptError(`receipt is for kind "${claims.kind ?? ""}", not "${expect.kind}"`);
  if (expect.args !== undefined) {
    const sum = await argsSha256(expect.args);
    if (sum !== claims.args_sha256) throw new ReceiptError(`receipt was issued for other args (SHA-256 ${claims.args_sha256}, these are ${sum})`);
  }
  return claims;
}

/** Returns the hex SHA-256 of the canonical JSON (RFC 8785) of args. */
export async function argsSha256(args: unknown): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonicalJSON(args)));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Returns v in the JSON Canonicalization Scheme (RFC 8785): keys sorted by
 * UTF-16 code units (JavaScript's default sort), no whitespace, numbers and
 * strings as JSON.stringify writes them.
 */
export function canonicalJSON(v: unknown): string {
  if (v === null || typeof v !== "object") {
    const s = JSON.stringify(v);
    if (s === undefined) throw new TypeError("canonicalJSON: not a JSON value");
    return s;
  }
  if (Array.isArray(v)) return `[${v.map(canonicalJSON).join(",")}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJSON(o[k])}`)
    .join(",")}}`;
}

function fromBase64Url(s: string): Uint8Array<ArrayBuffer> {
  const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (s.length % 4)) % 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function utf8(b: Uint8Array): string {
  return new TextDecoder("utf-8", { fatal: true }).decode(b);
}
