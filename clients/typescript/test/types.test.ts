// The answer's type follows the question's: checked by tsc when the tests
// compile (a wrong type is a compile error, which fails the run).

import assert from "node:assert/strict";
import { test } from "node:test";

import type { Answer, Client, Interaction } from "../src/index.js";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function expectType<T extends true>(_ok: T): void {}

// Never called: only compiled.
export async function typedAnswers(c: Client): Promise<void> {
  expectType<Equal<Awaited<ReturnType<typeof c.askText>>, string>>(true);
  expectType<Equal<Awaited<ReturnType<typeof c.yesNo>>, boolean>>(true);

  const region = await c.choice("q", ["EU West", "US East"]);
  expectType<Equal<typeof region, string>>(true);
  const size = await c.choice("q", [{ key: "s", label: "Small" }, { key: "l", label: "Large" }]);
  expectType<Equal<typeof size, "s" | "l">>(true);
  const picked = await c.choices("q", [{ key: "lint", label: "Lint" }, { key: "e2e", label: "E2E" }]);
  expectType<Equal<typeof picked, ("lint" | "e2e")[]>>(true);
  const labels = await c.choices("q", ["a", "b"]);
  expectType<Equal<typeof labels, string[]>>(true);

  const release = await c.form<{ version: string }>("q", { type: "object" });
  expectType<Equal<typeof release, { version: string }>>(true);
  const anything = await c.form("q", { type: "object" });
  expectType<Equal<typeof anything, Record<string, unknown>>>(true);

  const approval = await c.ask({ interaction_type: "approval", question: "q" });
  expectType<Equal<typeof approval, Interaction<"approval">>>(true);
  expectType<Equal<NonNullable<typeof approval.result>["value"], boolean | undefined>>(true);
  const text = await c.ask({ question: "q" });
  expectType<Equal<NonNullable<typeof text.result>["value"], string | undefined>>(true);
  expectType<Equal<Answer<"multi_choice">, string[]>>(true);

  // @ts-expect-error: a default in the wrong type
  await c.yesNo("q", { default: "yes" });
  // @ts-expect-error: an option that does not exist
  await c.askText("q", { timout: 60 });
}

test("the answer types are checked at compile time", () => {
  assert.equal(typeof typedAnswers, "function");
});
