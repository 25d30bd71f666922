/**
 * The person who answers: they watch the server's event stream
 * (`/api/v1/events`) for a question and answer or cancel it over the HTTP
 * API, as the web inbox would. Tests wait on that signal, never on a sleep.
 */

import { PATIENCE, type Reply, type Server } from "./server.js";

/** A hitl:question payload. */
export interface QuestionMessage {
  interaction_id: string;
  interaction_type: string;
  question: string;
  context: string | null;
  options: { key: string; label: string }[];
  form_schema: any;
  default_response: unknown;
}

/**
 * Reads the server's event stream and calls onQuestion for every
 * hitl:question (or every message of another type) until it returns true
 * or the stream ends.
 */
export async function watchQuestions(
  server: Server,
  onQuestion: (m: QuestionMessage) => boolean | Promise<boolean>,
  token?: string,
  type = "hitl:question",
): Promise<void> {
  const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  const ctl = new AbortController();
  const res = await fetch(server.url + "/api/v1/events", { headers, signal: ctl.signal });
  if (!res.body) throw new Error(`event stream: ${res.status}`);
  const decoder = new TextDecoder();
  let buffered = "";
  let event = "";
  try {
    for await (const chunk of res.body) {
      buffered += decoder.decode(chunk as Uint8Array, { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl).replace(/\r$/, "");
        buffered = buffered.slice(nl + 1);
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:") && event === type) {
          if (await onQuestion(JSON.parse(line.slice(5)) as QuestionMessage)) return;
        }
      }
    }
  } finally {
    ctl.abort();
  }
}

/** Answers questions on the server as a person in the web inbox would. */
export class Person {
  constructor(
    readonly server: Server,
    readonly token?: string,
  ) {}

  /** Resolves with the question containing text once it has been asked. */
  asked(text: string): Promise<QuestionMessage> {
    let found: QuestionMessage | undefined;
    const done = watchQuestions(this.server, (m) => {
      if (!m.question.includes(text)) return false;
      found = m;
      return true;
    }, this.token);
    return withPatience(
      done.then(() => {
        if (!found) throw new Error(`event stream ended before ${JSON.stringify(text)} was asked`);
        return found;
      }),
      `nobody asked ${JSON.stringify(text)}`,
    );
  }

  /** Answers the question containing text with value once it is asked; resolves with the server's reply. */
  async answer(text: string, value: unknown): Promise<Reply & { message: QuestionMessage }> {
    const message = await this.asked(text);
    const reply = await this.server.request("POST", `/api/v1/interactions/${message.interaction_id}/respond`, { value }, this.token);
    return { ...reply, message };
  }

  /** Cancels the question containing text once it is asked. */
  async cancel(text: string, reason: string): Promise<Reply> {
    const message = await this.asked(text);
    return this.server.request("POST", `/api/v1/interactions/${message.interaction_id}/cancel`, { reason }, this.token);
  }
}

/** Rejects with message when p takes longer than PATIENCE. */
function withPatience<T>(p: Promise<T>, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(message)), PATIENCE);
    timer.unref();
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** Returns a valid answer to a hitl:question: approve (an approval or an action), the first option, or a form filled in from its schema. */
export function sampleAnswer(m: QuestionMessage): unknown {
  const keys = m.options.map((o) => o.key);
  switch (m.interaction_type) {
    case "approval":
      return true;
    case "single_choice":
      return keys[0];
    case "multi_choice":
      return keys.slice(0, 1);
    case "form":
      return sample(m.form_schema);
    case "action":
      return { decision: "approve" };
  }
  return "an answer";
}

function sample(schema: any): unknown {
  if ("default" in schema) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  switch (schema.type) {
    case "object":
      return Object.fromEntries((schema.required ?? []).map((k: string) => [k, sample(schema.properties[k])]));
    case "array":
      return [];
    case "string":
      return schema.format === "date" ? "2025-01-02" : "text";
    case "integer":
      return 1;
    case "number":
      return 1.5;
    case "boolean":
      return true;
  }
  return null;
}

/** Answers every question the server is asked, at once, with sampleAnswer. */
export function autoAnswer(server: Server): void {
  void watchQuestions(server, async (m) => {
    await server.request("POST", `/api/v1/interactions/${m.interaction_id}/respond`, { value: sampleAnswer(m) });
    return false;
  }).catch(() => {
    // the server stopped
  });
}
