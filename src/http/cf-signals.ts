/**
 * What Cloudflare says of a request's sender (`request.cf`, set by the platform, never by the client), as much as a
 * sign-in's risk needs (src/risk/): where the address is, its network (ASN) and, on plans with Bot Management, how
 * likely the request is automated. Each part is null when the platform did not say it (tests, `wrangler dev`, a plan
 * without it).
 */
export interface CfSignals {
  /** ISO 3166-1 alpha-2, upper case ("DE"); Cloudflare's "T1" (Tor) kept as it is. */
  country: string | null;
  asn: number | null;
  city: string | null;
  latitude: number | null;
  longitude: number | null;
  /** Bot Management's score, 1 (automated) to 99 (human); null without Bot Management. */
  botScore: number | null;
}

const text = (value: unknown, max: number): string | null =>
  typeof value === "string" && value.trim() !== "" ? value.trim().slice(0, max) : null;

/** `request.cf` gives coordinates as strings ("52.52437"); anything else, or out of range, is no coordinate. */
function coordinate(value: unknown, limit: number): number | null {
  const n = typeof value === "number" ? value : typeof value === "string" ? Number(value) : Number.NaN;
  return Number.isFinite(n) && Math.abs(n) <= limit ? n : null;
}

function whole(value: unknown, min: number, max: number): number | null {
  return typeof value === "number" && Number.isInteger(value) && value >= min && value <= max ? value : null;
}

/** The signals of `cf`, or null when it says none of them. */
export function cfSignalsOf(cf?: object): CfSignals | null {
  const raw = (cf ?? {}) as Record<string, unknown>;
  const bot = (raw.botManagement ?? {}) as Record<string, unknown>;
  const latitude = coordinate(raw.latitude, 90);
  const longitude = coordinate(raw.longitude, 180);
  const signals: CfSignals = {
    country: text(raw.country, 8)?.toUpperCase() ?? null,
    asn: whole(raw.asn, 0, 4_294_967_295),
    city: text(raw.city, 100),
    // A place is both coordinates or none.
    latitude: latitude !== null && longitude !== null ? latitude : null,
    longitude: latitude !== null && longitude !== null ? longitude : null,
    botScore: whole(bot.score, 1, 99),
  };
  return Object.values(signals).some((v) => v !== null) ? signals : null;
}
