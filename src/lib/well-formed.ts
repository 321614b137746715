/**
 * Well-formed Unicode (no lone UTF-16 surrogate). JSON's `\ud800` escape gives JavaScript a string no UTF-8 encoder
 * can write: `encodeURIComponent` throws on it, and so do the Rust parsers behind WASM libraries (Cedar's serde_json).
 * Input that reaches those is refused as malformed (a 400), never repaired: an id repaired to U+FFFD would name
 * another id. Data already stored is repaired where it is only an attribute (`wellFormedText`).
 */

const LONE_SURROGATE = /\p{Surrogate}/u;
const LONE_SURROGATES = /\p{Surrogate}/gu;

/** True when `text` holds no lone surrogate (`String.prototype.isWellFormed`, not in this project's ES lib yet). */
export const isWellFormedText = (text: string): boolean => !LONE_SURROGATE.test(text);

/** `text` with each lone surrogate replaced by U+FFFD, as `String.prototype.toWellFormed` does. */
export const wellFormedText = (text: string): string => text.replace(LONE_SURROGATES, "\uFFFD");

/** True when a parsed JSON value holds a lone surrogate in any string or key, however deep. */
export const holdsLoneSurrogate = (value: unknown): boolean => loneSurrogatePath(value) !== null;

/**
 * Where a parsed JSON value first holds a lone surrogate (`options.metadata.nick`; `""` for the value itself; a bad
 * key named by its parent's path and `(a key)`), or null. Walked with a list, not by recursion: a 64 KiB body of `[`
 * nests 32,000 deep, which JSON.parse takes and a recursive walk would overflow on. The path never quotes the bad text.
 */
export function loneSurrogatePath(value: unknown): string | null {
  const pending: [unknown, string][] = [[value, ""]];
  while (pending.length > 0) {
    const [next, path] = pending.pop()!;
    if (typeof next === "string") {
      if (!isWellFormedText(next)) return path;
    } else if (typeof next === "object" && next !== null) {
      for (const [key, item] of Object.entries(next)) {
        if (!isWellFormedText(key)) return `${path ? `${path} ` : ""}(a key)`;
        pending.push([item, path ? `${path}.${key}` : key]);
      }
    }
  }
  return null;
}
