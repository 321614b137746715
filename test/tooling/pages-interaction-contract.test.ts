// The built-in pages (src/pages/) finish an authorization exactly as an external login UI does: through oauth2's
// interaction contract (src/oauth2/interaction*.ts, exported by src/oauth2/index.ts), never through the pending
// request's storage, a client's row, the consents or a device code's row. Threat: a page that reached those could
// finish a request in a way the contract does not (skip remembering a consent, read a request's `state`, PKCE
// challenge or DPoP key, open a device's request without counting the guess), so the two login UIs would drift and
// what the contract promises (docs/oauth2.md) would hold for one of them only. The lint holds the pages to oauth2's
// index.ts; this holds them to the contract's names within it. Read as text, as the lint reads imports.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = process.cwd();
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

/** The names of `{ a, type B, c as d }`: what each binds on the importing side, or what is exported. */
const namesOf = (list: string) =>
  list
    .split(",")
    .map((name) => name.trim().replace(/^type\s+/, ""))
    .filter(Boolean)
    .map((name) => name.split(/\s+as\s+/).at(-1)!);

/** What src/oauth2/index.ts re-exports, by the module it comes from. */
function indexExports(): Map<string, string> {
  const from = new Map<string, string>();
  for (const [, list, module] of read("src/oauth2/index.ts").matchAll(
    /export\s+(?:type\s+)?\{([^}]*)\}\s+from\s+"([^"]+)"/g,
  )) {
    for (const name of namesOf(list!)) from.set(name, module!);
  }
  return from;
}

/** Every name a file of src/pages/ imports from oauth2, with the file. */
function pagesImports(): { file: string; name: string }[] {
  const files = readdirSync(join(ROOT, "src/pages"), { recursive: true, encoding: "utf8" }).filter((file) =>
    file.endsWith(".ts"),
  );
  return files.flatMap((file) =>
    [
      ...read(join("src/pages", file)).matchAll(
        /import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+"(?:\.\.\/)+oauth2(?:\/index)?"/g,
      ),
    ].flatMap(([, list]) => namesOf(list!).map((name) => ({ file, name }))),
  );
}

describe("the pages and oauth2's interaction contract", () => {
  it("src/pages imports from oauth2 only names its index.ts takes from the interaction contract's files", () => {
    const exported = indexExports();
    const imported = pagesImports();
    // The pages do use the contract (a regular expression that stopped matching would pass everything in silence).
    expect(imported.map(({ name }) => name)).toEqual(
      expect.arrayContaining(["describeInteraction", "completeInteraction", "denyInteraction"]),
    );
    const outside = imported.filter(
      ({ name }) => !/^\.\/interaction(-[a-z-]+)?$/.test(exported.get(name) ?? ""),
    );
    expect(outside).toEqual([]);
  });

  it("the contract's files hand out none of the storage helpers", () => {
    const exported = indexExports();
    const contract = [...exported]
      .filter(([, module]) => module.startsWith("./interaction"))
      .map(([name]) => name);
    for (const storage of [
      "PendingRequest",
      "savePendingRequest",
      "loadPendingRequest",
      "forgetPendingRequest",
      "newRequestId",
      "findOAuth2Client",
      "grantedScopes",
      "rememberConsent",
      "pendingByUserCode",
      "deviceRequest",
      "checkEndSession",
    ]) {
      expect(contract).not.toContain(storage);
      expect(exported.has(storage)).toBe(false);
    }
  });
});
