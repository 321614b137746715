// The built-in pages' words, one catalogue per language (src/oauth2/page/text/). Threat: a language that lacks a key
// (a new sentence added in English only) shows `undefined` to its readers, or throws where a sentence is a function
// of a number or a name; the type system catches a missing key in a catalogue typed `PageText`, this test catches
// what a cast or a widened type would let through, and a language added to the catalogue without every key.
import { describe, expect, it } from "vitest";
import { CATALOG } from "../../../src/oauth2/page/text";
import { en } from "../../../src/oauth2/page/text/en";

/** Every key path of a catalogue with the kind of its value (`string`, `function` and its arity, nested objects). */
function shape(value: unknown, path = ""): string[] {
  if (value !== null && typeof value === "object") {
    return Object.entries(value as Record<string, unknown>)
      .flatMap(([key, inner]) => shape(inner, path ? `${path}.${key}` : key))
      .sort();
  }
  const kind = typeof value === "function" ? `function/${(value as () => unknown).length}` : typeof value;
  return [`${path}: ${kind}`];
}

describe("page text catalogues", () => {
  it("every language has every key of English, with the same kind of value, and nothing else", () => {
    const english = shape(en);
    expect(Object.keys(CATALOG).sort()).toEqual(["de", "en", "fr"]);
    for (const [lang, catalogue] of Object.entries(CATALOG)) {
      expect(shape(catalogue), lang).toEqual(english);
      expect(catalogue.lang).toBe(lang);
    }
  });

  it("no sentence is empty, and the sentences that take a value use it", () => {
    for (const [lang, catalogue] of Object.entries(CATALOG)) {
      for (const entry of shape(catalogue)) {
        const path = entry.split(": ")[0]!;
        const value = path
          .split(".")
          .reduce<unknown>((at, key) => (at as Record<string, unknown>)[key], catalogue);
        const text = typeof value === "function" ? String((value as (x: unknown) => unknown)("⟨x⟩")) : value;
        expect(String(text).trim(), `${lang} ${path}`).not.toBe("");
        if (typeof value === "function") expect(String(text), `${lang} ${path}`).toContain("⟨x⟩");
      }
    }
  });
});
