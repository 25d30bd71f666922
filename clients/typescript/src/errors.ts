/**
 * The errors every call may throw: the server's errors, one class per code.
 * @module
 */

import type { Interaction } from "./types.js";

/** What an error is built from. */
export interface HitlErrorInit {
  /** The server's error code, such as `"expired"`; the class's own by default. */
  code?: string;
  /** The HTTP status; absent when there was no response, or for an interaction's outcome. */
  status?: number;
  /** The interaction the error is about, such as the expired or cancelled one. */
  interaction?: Interaction;
  /** What caused it, such as the network error behind {@link Unreachable}. */
  cause?: unknown;
}

/**
 * The base class of every error the client throws. `code` is the server's
 * error code (`"expired"`, `"invalid_value"`, …) or, when the server could
 * not be reached, `"unreachable"`; `message` is the server's message.
 */
export class HitlError extends Error {
  /** The code this class stands for when the server sends none. */
  static readonly defaultCode: string = "internal";
  /** The server's error code. */
  readonly code: string;
  /** The HTTP status, when there was a response. */
  readonly status: number | undefined;
  /** The interaction the error is about, when the client has it. */
  readonly interaction: Interaction | undefined;

  constructor(message: string, init: HitlErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.code = init.code ?? (new.target as typeof HitlError).defaultCode;
    this.status = init.status;
    this.interaction = init.interaction;
  }
}

/** The server refused a malformed or incomplete request (400), or one too large (413). */
export class InvalidRequest extends HitlError {
  static override readonly defaultCode = "invalid";
}

/** No credentials or bad ones (401): set HITL_TOKEN or pass `token`. */
export class Unauthorized extends HitlError {
  static override readonly defaultCode = "unauthorized";
}

/** The credentials may not do this (403), such as a responder token asking. */
export class Forbidden extends HitlError {
  static override readonly defaultCode = "forbidden";
}

/** No such interaction, or one the caller may not see (404). */
export class NotFound extends HitlError {
  static override readonly defaultCode = "not_found";
}

/** Already answered, or an idempotency key reused for another question (409). */
export class Conflict extends HitlError {
  static override readonly defaultCode = "conflict";
}

/** The deadline passed with no answer (410, or the outcome of a question). */
export class Expired extends HitlError {
  static override readonly defaultCode = "expired";
}

/** The question was withdrawn (410, or the outcome of a question); `reason` says why. */
export class Cancelled extends HitlError {
  static override readonly defaultCode = "cancelled";

  /** The reason recorded on the server, such as `"agent_cancelled"`, or "". */
  get reason(): string {
    return this.interaction?.result?.reason ?? "";
  }
}

/** A value that is not a valid answer for the question's type (422). */
export class InvalidAnswer extends HitlError {
  static override readonly defaultCode = "invalid_value";
}

/** Too many requests (429); `retryAfter` is the server's hint in seconds, if any. */
export class RateLimited extends HitlError {
  static override readonly defaultCode = "rate_limited";
  /** Seconds to wait before trying again, from the Retry-After header. */
  readonly retryAfter: number | undefined;

  constructor(message: string, init: HitlErrorInit & { retryAfter?: number | undefined } = {}) {
    super(message, init);
    this.retryAfter = init.retryAfter;
  }
}

/** The server is not ready or is shutting down (503), or a gateway in front of it failed. */
export class Unavailable extends HitlError {
  static override readonly defaultCode = "unavailable";
}

/** No complete response: the server is down, restarting, or the connection broke. */
export class Unreachable extends HitlError {
  static override readonly defaultCode = "unreachable";
}

// Each server error code to its class (the table mirrors the server's).
const byCode: Record<string, typeof HitlError> = {
  invalid: InvalidRequest,
  too_large: InvalidRequest,
  unauthorized: Unauthorized,
  forbidden: Forbidden,
  not_found: NotFound,
  conflict: Conflict,
  expired: Expired,
  cancelled: Cancelled,
  invalid_value: InvalidAnswer,
  rate_limited: RateLimited,
  unavailable: Unavailable,
};

// Statuses for responses without a hitl error body (a proxy's page, say).
const byStatus: Record<number, typeof HitlError> = {
  400: InvalidRequest,
  401: Unauthorized,
  403: Forbidden,
  404: NotFound,
  409: Conflict,
  413: InvalidRequest,
  422: InvalidAnswer,
  429: RateLimited,
  502: Unavailable,
  503: Unavailable,
  504: Unavailable,
};

/**
 * Returns the error for a failed response: the server's
 * `{"error": {"code", "message"}}` as the class of its code, or, for any
 * other body, the class of its status with the start of the body.
 */
export function errorFromResponse(status: number, body: string, retryAfter?: string | null): HitlError {
  let code: string | undefined;
  let message = "";
  try {
    const doc: unknown = JSON.parse(body);
    const err = typeof doc === "object" && doc !== null ? (doc as { error?: unknown }).error : undefined;
    if (typeof err === "object" && err !== null) {
      const e = err as { code?: unknown; message?: unknown };
      if (typeof e.code === "string" && e.code !== "") {
        code = e.code;
        message = typeof e.message === "string" ? e.message : "";
      }
    }
  } catch {
    // not JSON: a proxy's page
  }
  let cls: typeof HitlError;
  if (code === undefined) {
    cls = byStatus[status] ?? HitlError;
    const snippet = body.slice(0, 200).trim();
    message = `HTTP ${status}${snippet ? `: ${snippet}` : ""}`;
    code = cls === HitlError ? "unexpected_response" : cls.defaultCode;
  } else {
    cls = byCode[code] ?? HitlError;
  }
  if (cls === RateLimited) {
    const seconds = retryAfter ? Number(retryAfter) : NaN;
    return new RateLimited(message, { code, status, retryAfter: Number.isFinite(seconds) ? seconds : undefined });
  }
  return new cls(message, { code, status });
}
