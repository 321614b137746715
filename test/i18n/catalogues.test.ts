// Every word the service shows or mails, one catalogue per language (src/browser/text/<language>/). Threat: a language
// that lacks a key (a new sentence added in English only) shows `undefined` to its readers, or throws where a sentence
// is a function of a number or a name; a mail that drops a placeholder loses its link. The type system catches a
// missing key in a catalogue typed `Catalogue`; this test catches what a cast or a widened type would let through,
// and a language added without every key.
import { describe, expect, it } from "vitest";
import { CATALOGUES, LANGUAGES } from "../../src/browser/text";
import { en } from "../../src/browser/text/en";

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

const at = (catalogue: unknown, path: string) =>
  path.split(".").reduce<unknown>((value, key) => (value as Record<string, unknown>)[key], catalogue);

/** The `${name}` placeholders of a mail text, sorted and without repeats. */
const placeholders = (text: string) => [...new Set(text.match(/\$\{\w+\}/g) ?? [])].sort();

describe("catalogues", () => {
  it("ships the six languages of contract §13", () => {
    expect(Object.keys(CATALOGUES).sort()).toEqual(["de", "en", "es", "fr", "ja", "pt"]);
    expect([...LANGUAGES].sort()).toEqual(Object.keys(CATALOGUES).sort());
  });

  it("every language has every key of English, with the same kind of value, and nothing else", () => {
    const english = shape(en);
    for (const [lang, catalogue] of Object.entries(CATALOGUES)) {
      expect(shape(catalogue), lang).toEqual(english);
      expect(catalogue.pages.lang).toBe(lang);
    }
  });

  it("no sentence is empty, and the sentences that take a value use it", () => {
    for (const [lang, catalogue] of Object.entries(CATALOGUES)) {
      for (const entry of shape(catalogue)) {
        const path = entry.split(": ")[0]!;
        const value = at(catalogue, path);
        const text = typeof value === "function" ? String((value as (x: unknown) => unknown)("⟨x⟩")) : value;
        expect(String(text).trim(), `${lang} ${path}`).not.toBe("");
        if (typeof value === "function") expect(String(text), `${lang} ${path}`).toContain("⟨x⟩");
      }
    }
  });

  it("every mail keeps English's placeholders, in its subject, text and HTML", () => {
    for (const [lang, catalogue] of Object.entries(CATALOGUES)) {
      for (const entry of shape(catalogue)) {
        const path = entry.split(": ")[0]!;
        if (!/(^mails\.[^.]+|\.mail)\.(subject|text|html)$/.test(path)) continue;
        const mine = at(catalogue, path) as string;
        expect(placeholders(mine), `${lang} ${path}`).toEqual(placeholders(at(en, path) as string));
      }
    }
  });

  it("a language other than English is not English (a copy left untranslated)", () => {
    for (const [lang, catalogue] of Object.entries(CATALOGUES)) {
      if (lang === "en") continue;
      const same = shape(catalogue)
        .map((entry) => entry.split(": ")[0]!)
        .filter((path) => {
          const value = at(catalogue, path);
          return typeof value === "string" && value.length > 12 && value === at(en, path);
        });
      // A few words are the same in both (a brand, "Passkeys", "OK"): a short list, not the catalogue.
      expect(same.length, `${lang}: ${same.slice(0, 8).join(", ")}`).toBeLessThan(5);
    }
  });
});
