/**
 * Conditional requests and byte ranges for file downloads (storage contract §3.2, §3.3), as RFC 9110 defines them.
 * Pure functions of the request headers and the file's validators: they are evaluated before any byte is read from
 * R2 or any image is transformed. (Groundwork of the storage issue; the download routes will call these.)
 */

export interface Validators {
  /** The stored strong entity-tag, quoted: `"0cc175b9c0f1b6a831c399e269772661"`. */
  etag: string;
  lastModified: Date;
}

export type Precondition = "proceed" | "not-modified" | "precondition-failed";

interface EntityTag {
  weak: boolean;
  opaque: string;
}

/** One entity-tag (`W/"x"` or `"x"`); null when malformed. */
function parseEntityTag(value: string): EntityTag | null {
  const match = /^\s*(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"\s*$/.exec(value);
  return match ? { weak: match[1] !== undefined, opaque: match[2]! } : null;
}

/** `*`, or the list of entity-tags (commas may only separate them: `etagc` has no DQUOTE). Malformed members are dropped. */
function parseEntityTagList(value: string): "*" | EntityTag[] {
  if (value.trim() === "*") return "*";
  const tags: EntityTag[] = [];
  for (const match of value.matchAll(/(W\/)?"([^"]*)"/g)) {
    const tag = parseEntityTag(match[0]);
    if (tag) tags.push(tag);
  }
  return tags;
}

/** RFC 9110 §8.8.3.2: strong comparison needs both strong; weak comparison ignores the W/ prefix. */
const strongMatch = (a: EntityTag, b: EntityTag) => !a.weak && !b.weak && a.opaque === b.opaque;
const weakMatch = (a: EntityTag, b: EntityTag) => a.opaque === b.opaque;

/** An HTTP-date in seconds, or null: a malformed date is ignored (RFC 9110 §13.1.3, §13.1.4). */
function httpDateSeconds(value: string | null): number | null {
  if (!value) return null;
  // HTTP-date forms all carry a weekday and "GMT"; Date.parse alone would accept far more than RFC 9110 allows.
  if (
    !/^[A-Za-z]{3,9}, .+ GMT$/.test(value.trim()) &&
    !/^[A-Za-z]{3} [A-Za-z]{3} .+ \d{4}$/.test(value.trim())
  ) {
    return null;
  }
  // asctime has no zone and means GMT; say so, or the parser would read it as local time.
  const ms = Date.parse(/GMT$/.test(value.trim()) ? value : `${value} GMT`);
  return Number.isNaN(ms) ? null : Math.floor(ms / 1000);
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

/**
 * RFC 9110 §13.2.2, in its order: If-Match, else If-Unmodified-Since (→ 412); If-None-Match, else
 * If-Modified-Since (→ 304 for GET and HEAD). Dates compare at one-second resolution, as HTTP-dates carry.
 */
export function evaluatePreconditions(headers: Headers, file: Validators): Precondition {
  const current = parseEntityTag(file.etag);
  const ifMatch = headers.get("if-match");
  if (ifMatch !== null) {
    const list = parseEntityTagList(ifMatch);
    const matched = list === "*" || (current !== null && list.some((tag) => strongMatch(tag, current)));
    if (!matched) return "precondition-failed";
  } else {
    const since = httpDateSeconds(headers.get("if-unmodified-since"));
    if (since !== null && seconds(file.lastModified) > since) return "precondition-failed";
  }
  const ifNoneMatch = headers.get("if-none-match");
  if (ifNoneMatch !== null) {
    const list = parseEntityTagList(ifNoneMatch);
    if (list === "*" || (current !== null && list.some((tag) => weakMatch(tag, current))))
      return "not-modified";
  } else {
    const since = httpDateSeconds(headers.get("if-modified-since"));
    if (since !== null && seconds(file.lastModified) <= since) return "not-modified";
  }
  return "proceed";
}

export type RangeDecision =
  | { kind: "full" }
  | { kind: "partial"; offset: number; length: number }
  | { kind: "unsatisfiable" };

/**
 * If-Range (RFC 9110 §13.1.5): the range applies only when the validator still matches — an entity-tag by strong
 * comparison, or a date equal to Last-Modified (a date is a weak validator unless it is exact to the second).
 */
function ifRangeHolds(value: string | null, file: Validators): boolean {
  if (value === null) return true;
  const tag = parseEntityTag(value);
  if (tag) {
    const current = parseEntityTag(file.etag);
    return current !== null && strongMatch(tag, current);
  }
  const date = httpDateSeconds(value);
  return date !== null && date === seconds(file.lastModified);
}

/**
 * The Range header of a GET for a file of `size` bytes (RFC 9110 §14.2): one range `bytes=a-b`, `bytes=a-` or
 * `bytes=-n` is served; a range covering the whole file is the full answer; several ranges, another unit or a
 * malformed value are ignored (full answer, as the contract documents); a range that starts past the end is
 * unsatisfiable (416).
 */
export function evaluateRange(headers: Headers, size: number, file: Validators): RangeDecision {
  const range = headers.get("range");
  if (range === null || !ifRangeHolds(headers.get("if-range"), file)) return { kind: "full" };
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(range);
  if (!match || (match[1] === "" && match[2] === "")) return { kind: "full" };
  let start: number;
  let end: number;
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return { kind: "unsatisfiable" };
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    const last = match[2] === "" ? Number.POSITIVE_INFINITY : Number(match[2]);
    if (last < start) return { kind: "full" }; // last-pos before first-pos: invalid, ignored
    if (start >= size) return { kind: "unsatisfiable" };
    end = Math.min(last, size - 1);
  }
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end)) return { kind: "full" };
  if (start === 0 && end === size - 1) return { kind: "full" };
  return { kind: "partial", offset: start, length: end - start + 1 };
}
