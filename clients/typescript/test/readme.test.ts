// Every TypeScript example in README.md compiles (against the built
// package, imported by its name) and runs against a real server, with a
// person answering whatever it asks.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";

import { autoAnswer } from "./person.js";
import { PACKAGE, REPO, Server } from "./server.js";

const run = promisify(execFile);
// This package's README, and docs/clients.md's example beside Go's and Python's.
const examples = [
  ...readFileSync(join(PACKAGE, "README.md"), "utf8").matchAll(/^```ts\n(.*?)^```$/gms),
  ...readFileSync(join(REPO, "docs", "clients.md"), "utf8").matchAll(/^<!-- snippet: clients-typescript -->\n\n```ts\n(.*?)^```$/gms),
].map((m) => m[1]!);
// The framework examples need a model: compiled against the pinned frameworks, not run.
const compiled = [...readFileSync(join(PACKAGE, "README.md"), "utf8").matchAll(/^```typescript\n(.*?)^```$/gms)].map((m) => m[1]!);
// Inside the package, so that "@hitl/client" resolves to it by its own name.
const dir = join(PACKAGE, "build", "readme");

let server: Server;

before(async () => {
  assert.ok(existsSync(join(PACKAGE, "dist", "index.d.ts")), "build the package first (tsc -p tsconfig.json)");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  examples.forEach((code, i) => writeFileSync(join(dir, `example${i + 1}.ts`), code));
  compiled.forEach((code, i) => writeFileSync(join(dir, `framework${i + 1}.ts`), code));
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({ extends: "../../tsconfig.json", compilerOptions: { rootDir: ".", outDir: "out", declaration: false, declarationMap: false, sourceMap: false }, include: ["*.ts"] }),
  );
  await run(join(PACKAGE, "node_modules", ".bin", "tsc"), ["-p", join(dir, "tsconfig.json")]).catch((err: { stdout?: string }) => {
    throw new Error(`the README's examples do not compile:\n${err.stdout ?? String(err)}`);
  });
  server = await Server.start();
  autoAnswer(server);
});
after(() => server?.stop());

test("the README has examples", () => {
  assert.ok(examples.length >= 7, `${examples.length} examples`);
  assert.equal(compiled.length, 2, "the AI SDK's and the OpenAI Agents SDK's examples (compiled in before)");
  assert.match(examples.at(-1)!, /hitl\.yesNo\(/, "docs/clients.md's example is found");
});

examples.forEach((code, i) => {
  test(`README example ${i + 1}`, async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, HITL_URL: server.url, HITL_AGENT: "readme" };
    delete env["HITL_TOKEN"];
    const { stdout } = await run(process.execPath, [join(dir, "out", `example${i + 1}.js`)], { env, timeout: 30_000 }).catch(
      (err: { stderr?: string }) => {
        throw new Error(`example ${i + 1} failed:\n${code}\n${err.stderr ?? String(err)}`);
      },
    );
    assert.ok(stdout.trim(), "every example prints what it got");
    const pending = await server.request("GET", "/api/v1/interactions?status=pending");
    assert.deepEqual(pending.body.interactions, [], "the example left a question pending");
  });
});
