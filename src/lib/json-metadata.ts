import { z } from "zod";
import { holdsLoneSurrogate } from "./well-formed";

/**
 * Free-form JSON objects that clients store and get back: user metadata (sign-up options, anonymous sign-in,
 * deanonymize), PAT metadata, file metadata. One schema for every entry point, so no route can forget the bounds.
 * Without them a 60 kB body nested 10,000 levels deep passed validation and then overflowed the stack of
 * `JSON.stringify` (D1 insert) or of the structured clone of a Durable Object call: a 500.
 */
export const METADATA_MAX_DEPTH = 10;
export const METADATA_MAX_BYTES = 16 * 1024;

/** How deep `value` nests objects and arrays, stopping past `limit`. Iterative: a hostile depth cannot overflow it. */
export function nestingExceeds(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [node, depth] = next;
    if (typeof node !== "object" || node === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(node)) pending.push([child, depth + 1]);
  }
  return false;
}

export const metadataSchema = z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
  if (nestingExceeds(value, METADATA_MAX_DEPTH)) {
    ctx.addIssue({ code: "custom", message: `must not nest deeper than ${METADATA_MAX_DEPTH} levels` });
    return;
  }
  if (new TextEncoder().encode(JSON.stringify(value)).byteLength > METADATA_MAX_BYTES) {
    ctx.addIssue({ code: "custom", message: `must not exceed ${METADATA_MAX_BYTES} bytes as JSON` });
    return;
  }
  // Kept, it is text no UTF-8 writer takes (src/lib/well-formed.ts): a permission check about the user failed on it.
  if (holdsLoneSurrogate(value)) {
    ctx.addIssue({ code: "custom", message: "must be well-formed Unicode (no lone surrogate)" });
  }
});
