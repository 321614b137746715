import type { CfSignals } from "../http/cf-signals";

/**
 * Where a user's last sign-ins were (`users.recent_places`), newest first: enough to tell a sign-in from a place no
 * airliner could have reached since the last one (src/risk/), kept in the user's row and written with `last_seen`
 * (no row, no index of its own: D1 bills rows written). Each is "minute,latitude,longitude,country", ";"-joined;
 * coordinates to two decimals (about a kilometre: `request.cf` places an address no closer than its city).
 */
export interface RecentPlace {
  /** ms, to the minute */
  at: number;
  latitude: number | null;
  longitude: number | null;
  country: string | null;
}

/** Kept per user: the last one is what travel is measured from; the others tell a country seen before. */
export const KEPT_PLACES = 3;

export function parseRecentPlaces(stored: string | null | undefined): RecentPlace[] {
  if (!stored) return [];
  const places: RecentPlace[] = [];
  for (const entry of stored.split(";").slice(0, KEPT_PLACES)) {
    const [minute, lat, lon, country] = entry.split(",");
    const at = Number(minute) * 60_000;
    if (!Number.isFinite(at)) continue;
    const latitude = lat ? Number(lat) : Number.NaN;
    const longitude = lon ? Number(lon) : Number.NaN;
    const located = Number.isFinite(latitude) && Number.isFinite(longitude);
    places.push({
      at,
      latitude: located ? latitude : null,
      longitude: located ? longitude : null,
      country: country || null,
    });
  }
  return places;
}

const format = (p: RecentPlace) =>
  [
    Math.floor(p.at / 60_000),
    p.latitude === null ? "" : p.latitude.toFixed(2),
    p.longitude === null ? "" : p.longitude.toFixed(2),
    p.country ?? "",
  ].join(",");

/**
 * The column after a sign-in from `signals` at `now`; the column as it was (undefined: not written) when the request
 * said nowhere (no `request.cf`, a loopback address): an unknown place is not a place, and must not push known
 * ones out.
 */
export function withPlace(
  stored: string | null | undefined,
  signals: CfSignals | null,
  now: number,
): string | undefined {
  if (!signals || (signals.country === null && signals.latitude === null)) return undefined;
  const place: RecentPlace = {
    at: now,
    latitude: signals.latitude,
    longitude: signals.longitude,
    country: signals.country?.replace(/[,;]/g, "") ?? null,
  };
  return [place, ...parseRecentPlaces(stored)].slice(0, KEPT_PLACES).map(format).join(";");
}
