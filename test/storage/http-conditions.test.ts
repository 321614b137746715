import { describe, expect, it } from "vitest";
import { evaluatePreconditions, evaluateRange, type Validators } from "../../src/storage/http-conditions";

const FILE: Validators = {
  etag: '"0cc175b9c0f1b6a831c399e269772661"',
  lastModified: new Date("2026-11-20T10:00:00.750Z"),
};
const SAME_SECOND = "Fri, 20 Nov 2026 10:00:00 GMT";
const SECOND_BEFORE = "Fri, 20 Nov 2026 09:59:59 GMT";
const LATER = "Sat, 21 Nov 2026 10:00:00 GMT";
const OTHER = '"ffff"';

const check = (headers: Record<string, string>) => evaluatePreconditions(new Headers(headers), FILE);

describe("conditional requests (RFC 9110 §13.2.2)", () => {
  it("If-Match: strong comparison against a list, * matches, weak tags never match", () => {
    expect(check({ "if-match": FILE.etag })).toBe("proceed");
    expect(check({ "if-match": `${OTHER}, ${FILE.etag}` })).toBe("proceed");
    expect(check({ "if-match": "*" })).toBe("proceed");
    expect(check({ "if-match": OTHER })).toBe("precondition-failed");
    expect(check({ "if-match": `W/${FILE.etag}` })).toBe("precondition-failed");
    expect(check({ "if-match": "not a tag" })).toBe("precondition-failed");
  });

  it("If-Unmodified-Since: only without If-Match, at one-second resolution, malformed dates ignored", () => {
    expect(check({ "if-unmodified-since": SAME_SECOND })).toBe("proceed");
    expect(check({ "if-unmodified-since": LATER })).toBe("proceed");
    expect(check({ "if-unmodified-since": SECOND_BEFORE })).toBe("precondition-failed");
    expect(check({ "if-unmodified-since": "yesterday" })).toBe("proceed");
    // If-Match wins: it passes, so the date is not looked at.
    expect(check({ "if-match": FILE.etag, "if-unmodified-since": SECOND_BEFORE })).toBe("proceed");
  });

  it("If-None-Match: weak comparison against a list, * matches, → not modified", () => {
    expect(check({ "if-none-match": FILE.etag })).toBe("not-modified");
    expect(check({ "if-none-match": `W/${FILE.etag}` })).toBe("not-modified");
    expect(check({ "if-none-match": `${OTHER}, W/${FILE.etag}` })).toBe("not-modified");
    expect(check({ "if-none-match": "*" })).toBe("not-modified");
    expect(check({ "if-none-match": OTHER })).toBe("proceed");
  });

  it("If-Modified-Since: only without If-None-Match, at one-second resolution", () => {
    expect(check({ "if-modified-since": SAME_SECOND })).toBe("not-modified");
    expect(check({ "if-modified-since": LATER })).toBe("not-modified");
    expect(check({ "if-modified-since": SECOND_BEFORE })).toBe("proceed");
    expect(check({ "if-modified-since": "Fri, 32 Nov 2026 10:00:00 GMT" })).toBe("proceed");
    // If-None-Match present and not matching: the date is not looked at.
    expect(check({ "if-none-match": OTHER, "if-modified-since": LATER })).toBe("proceed");
  });

  it("accepts the obsolete date forms RFC 9110 requires recipients to read", () => {
    expect(check({ "if-modified-since": "Friday, 20-Nov-26 10:00:00 GMT" })).toBe("not-modified");
    expect(check({ "if-modified-since": "Fri Nov 20 10:00:00 2026" })).toBe("not-modified");
  });

  it("412 before 304: a failed If-Match is not rescued by a matching If-None-Match", () => {
    expect(check({ "if-match": OTHER, "if-none-match": FILE.etag })).toBe("precondition-failed");
    expect(check({ "if-match": FILE.etag, "if-none-match": FILE.etag })).toBe("not-modified");
    expect(check({})).toBe("proceed");
  });
});

const range = (value: string, size = 1000, extra: Record<string, string> = {}) =>
  evaluateRange(new Headers({ range: value, ...extra }), size, FILE);

describe("byte ranges (RFC 9110 §14)", () => {
  it("serves one range in each of its three forms", () => {
    expect(range("bytes=0-99")).toEqual({ kind: "partial", offset: 0, length: 100 });
    expect(range("bytes=900-")).toEqual({ kind: "partial", offset: 900, length: 100 });
    expect(range("bytes=-100")).toEqual({ kind: "partial", offset: 900, length: 100 });
    expect(range("bytes=990-5000")).toEqual({ kind: "partial", offset: 990, length: 10 });
    expect(range("bytes=-5000", 1000)).toEqual({ kind: "full" });
  });

  it("a range covering the whole file is the full answer", () => {
    expect(range("bytes=0-999")).toEqual({ kind: "full" });
    expect(range("bytes=0-")).toEqual({ kind: "full" });
  });

  it("past the end is unsatisfiable; so is an empty suffix and any range of an empty file", () => {
    expect(range("bytes=1000-")).toEqual({ kind: "unsatisfiable" });
    expect(range("bytes=1000-1001")).toEqual({ kind: "unsatisfiable" });
    expect(range("bytes=-0")).toEqual({ kind: "unsatisfiable" });
    expect(range("bytes=0-", 0)).toEqual({ kind: "unsatisfiable" });
    expect(range("bytes=-1", 0)).toEqual({ kind: "unsatisfiable" });
  });

  it("ignores malformed values, other units and several ranges (full answer)", () => {
    for (const value of ["bytes=5", "bytes=9-3", "bytes=-", "items=0-1", "bytes=0-1,5-6", "bytes=a-b", ""]) {
      expect(range(value)).toEqual({ kind: "full" });
    }
    expect(evaluateRange(new Headers(), 1000, FILE)).toEqual({ kind: "full" });
  });

  it("If-Range: the range applies only while the entity-tag (strong) or the exact date still matches", () => {
    expect(range("bytes=0-9", 1000, { "if-range": FILE.etag })).toEqual({
      kind: "partial",
      offset: 0,
      length: 10,
    });
    expect(range("bytes=0-9", 1000, { "if-range": OTHER })).toEqual({ kind: "full" });
    expect(range("bytes=0-9", 1000, { "if-range": `W/${FILE.etag}` })).toEqual({ kind: "full" });
    expect(range("bytes=0-9", 1000, { "if-range": SAME_SECOND })).toEqual({
      kind: "partial",
      offset: 0,
      length: 10,
    });
    expect(range("bytes=0-9", 1000, { "if-range": LATER })).toEqual({ kind: "full" });
    expect(range("bytes=0-9", 1000, { "if-range": "garbage" })).toEqual({ kind: "full" });
  });
});
