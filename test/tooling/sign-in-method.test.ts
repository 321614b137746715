// Every sign-in names its method (src/auth/sign-in/method.ts): no method is parsed from a URL anywhere. The threat
// is a way back to guessing: a flow reached at a new path (a second API face, a page moved) would record, and be
// judged by enforced SSO, as whatever its URL happens to look like. Read as text: the guessers that were removed
// (a path → method table, the sign-up path test, the request path in the services) must not come back.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(process.cwd(), "src");
const files = (readdirSync(SRC, { recursive: true }) as string[])
  .filter((name) => name.endsWith(".ts"))
  .map((name) => ({ name, text: readFileSync(join(SRC, name), "utf8") }));

describe("the sign-in method", () => {
  it("is never parsed from a URL", () => {
    const guessers = files.filter(({ text }) =>
      /\bmethodOf\b|\bisSignUpPath\b|\bsessionKeyOf\b|\basHostedPages\b/.test(text),
    );
    expect(guessers.map(({ name }) => name)).toEqual([]);
  });

  it("has no request path to be read from: the services carry none", () => {
    const deps = files.find(({ name }) => name === join("http", "deps.ts"))!.text;
    expect(deps).not.toMatch(/^\s*path\??:/m);
  });

  it("reaches the session only through the pipeline", () => {
    const writers = files.filter(({ text }) => /\bwriteSession\(/.test(text)).map(({ name }) => name);
    expect(writers.toSorted()).toEqual(
      [join("auth", "new-sessions.ts"), join("auth", "sign-in", "pipeline.ts")].toSorted(),
    );
  });
});
