// The lint's house rules (.dependency-cruiser.cjs) refuse what they say they refuse: each case plants one import in a
// small tree shaped like src/ (the folders the rules name, a file or two in each: FIXTURE) and runs the command
// `npm run lint` runs, with the project's config. Without this, a rule whose pattern stopped matching (a folder
// renamed, a regular expression gone wrong) would pass everything in silence. The real src/ passing is `npm run lint`
// itself; a copy of it here cost a whole cruise per case.
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = process.cwd();
const DEPCRUISE = join(ROOT, "node_modules", "dependency-cruiser", "bin", "dependency-cruiser.mjs");
// dependency-cruiser runs on Node 22 or newer: the project's own (the `node` devDependency), whatever runs Vitest.
const NODE = join(ROOT, "node_modules", "node", "bin", "node");

/** What the planted imports below reach: auth's core, two of its sub-folders, token families and their drawer. */
const FIXTURE: Record<string, string> = {
  "src/auth/index.ts": 'export { findUserById } from "./users";\n',
  "src/auth/users.ts": "export const findUserById = (id: string) => id;\n",
  "src/auth/accounts/index.ts": "export const signUp = (email: string) => email;\n",
  "src/auth/links/index.ts": 'export { consumeTicket } from "./tickets";\n',
  "src/auth/links/tickets.ts": "export const consumeTicket = (ticket: string) => ticket;\n",
  "src/auth/sessions/index.ts": "export const renewSession = (id: string) => id;\n",
  "src/providers/index.ts": 'export { findUserById } from "../auth";\n',
  "src/token-families/index.ts": "export const rotate = (token: string) => token;\n",
  "src/token-families/legacy/index.ts": "export class RefreshSession {}\n",
  "src/lib/hex.ts": "export const toHex = (bytes: Uint8Array) => String(bytes);\n",
};

let copy: string;

beforeAll(() => {
  copy = mkdtempSync(join(tmpdir(), "edge-auth-lint-"));
  for (const [path, text] of Object.entries(FIXTURE)) {
    mkdirSync(dirname(join(copy, path)), { recursive: true });
    writeFileSync(join(copy, path), text);
  }
  cpSync(join(ROOT, "tsconfig.json"), join(copy, "tsconfig.json"));
});
afterAll(() => rmSync(copy, { recursive: true, force: true }));

/** Runs the lint's dependency check on the copy with `planted` files added; its violations, or [] when it passes. */
async function violations(planted: Record<string, string>): Promise<string[]> {
  for (const [path, text] of Object.entries(planted)) writeFileSync(join(copy, path), text);
  try {
    await run(
      NODE,
      [DEPCRUISE, "src", "--config", join(ROOT, ".dependency-cruiser.cjs"), "--output-type", "err"],
      {
        cwd: copy,
      },
    );
    return [];
  } catch (error) {
    const output = `${(error as { stdout?: string }).stdout ?? ""}`;
    return output.split("\n").filter((line) => line.trim().startsWith("error"));
  } finally {
    for (const path of Object.keys(planted)) rmSync(join(copy, path));
  }
}

// Each case starts dependency-cruiser on the small tree: a second or two, more on a busy machine.
const BUDGET = 30_000;

describe("the lint's house rules", () => {
  it("pass the fixture tree as it is", async () => expect(await violations({})).toEqual([]), BUDGET);

  it(
    "refuse a sub-folder of auth/ importing another's file past its index.ts",
    async () => {
      const found = await violations({
        "src/auth/accounts/planted.ts": 'export { consumeTicket } from "../links/tickets";\n',
      });
      expect(found.join("\n")).toMatch(
        /sub-folders-meet-through-their-index: src\/auth\/accounts\/planted\.ts/,
      );
      // Through the index it is fine.
      expect(
        await violations({ "src/auth/accounts/planted.ts": 'export { consumeTicket } from "../links";\n' }),
      ).toEqual([]);
    },
    BUDGET,
  );

  it(
    "refuse an import cycle",
    async () => {
      const found = await violations({
        "src/lib/planted-a.ts": 'import "./planted-b";\n',
        "src/lib/planted-b.ts": 'import "./planted-a";\n',
      });
      expect(found.join("\n")).toMatch(/no-circular: src\/lib\/planted-[ab]\.ts/);
    },
    BUDGET,
  );

  it(
    "refuse auth's core importing a sub-folder, and token families using their legacy drawer",
    async () => {
      const found = await violations({
        "src/auth/planted.ts": 'export { renewSession } from "./sessions";\n',
        "src/token-families/planted.ts": 'export { RefreshSession } from "./legacy";\n',
      });
      expect(found.join("\n")).toMatch(/auth-core-below-its-sub-folders: src\/auth\/planted\.ts/);
      expect(found.join("\n")).toMatch(
        /nothing-depends-on-the-legacy-drawer: src\/token-families\/planted\.ts/,
      );
    },
    BUDGET,
  );

  it(
    "refuse another feature reaching into auth past src/auth/index.ts",
    async () => {
      const found = await violations({
        "src/providers/planted.ts": 'export { findUserById } from "../auth/users";\n',
      });
      expect(found.join("\n")).toMatch(/feature-uses-public-surface: src\/providers\/planted\.ts/);
    },
    BUDGET,
  );
});
