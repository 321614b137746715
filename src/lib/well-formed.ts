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

/** True when a parsed JSON value holds a lone surrogate in any string or key, however deep (bounded by the caller). */
export function holdsLoneSurrogate(value: unknown): boolean {
  if (typeof value === "string") return !isWellFormedText(value);
  if (typeof value !== "object" || value === null) return false;
  for (const [key, item] of Object.entries(value)) {
    if (!isWellFormedText(key) || holdsLoneSurrogate(item)) return true;
  }
  return false;
}
