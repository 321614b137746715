import { GoTrueError } from "./errors";

/**
 * GoTrue's `ban_duration` (auth-js `updateUserById`): `none`, or a Go duration (`24h`, `1h30m`, `876000h`, `90s`),
 * which Go's `time.ParseDuration` reads. Its answer: the ban's length in milliseconds, null for `none`, or GoTrue's
 * 400 for anything else.
 */

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};
const PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/gy;
/** Go's limit (a duration is an int64 of nanoseconds, about 290 years). */
const MAX_MS = 9_223_372_036_854;

export function banLengthMs(duration: string): number | null {
  if (duration === "none") return null;
  const refusal = new GoTrueError(400, "validation_failed", `invalid format for ban duration: ${duration}`);
  const sign = duration.startsWith("-") ? -1 : 1;
  const body = duration.replace(/^[+-]/, "");
  if (body === "0") return 0;
  if (body === "") throw refusal;
  PART.lastIndex = 0;
  let total = 0;
  let at = 0;
  for (let part = PART.exec(body); part; part = PART.exec(body)) {
    total += Number(part[1]) * UNIT_MS[part[2]!]!;
    at = PART.lastIndex;
  }
  if (at !== body.length || total > MAX_MS) throw refusal;
  return sign * total;
}
