import type { RecentPlace } from "../auth";

/**
 * Impossible travel: two sign-ins farther apart than an airliner flies in the time between them. Cloudflare places an
 * address no closer than its city (and a mobile network's or a VPN's exit often farther), so distances under
 * `NEARBY_KM` are never travel, and a sign-in within the same minute from another continent is as impossible as one
 * an hour later.
 */
export const AIRLINER_KMH = 1000;
export const NEARBY_KM = 500;
const EARTH_RADIUS_KM = 6371;

const radians = (degrees: number) => (degrees * Math.PI) / 180;

/** The great-circle distance (haversine) between two points, in km. */
export function greatCircleKm(
  a: { latitude: number; longitude: number },
  b: { latitude: number; longitude: number },
) {
  const dLat = radians(b.latitude - a.latitude);
  const dLon = radians(b.longitude - a.longitude);
  const h =
    Math.sin(dLat / 2) ** 2 +
    Math.cos(radians(a.latitude)) * Math.cos(radians(b.latitude)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

export interface Travel {
  /** The previous sign-in's country, for the reader of the audit (not its coordinates). */
  fromCountry: string | null;
  km: number;
  minutes: number;
  /** The speed it would take; null within the same minute. */
  kmh: number | null;
  impossible: boolean;
}

/** The travel from the last located sign-in to `here` at `now`, or null when either has no coordinates. */
export function travelFrom(
  places: readonly RecentPlace[],
  here: { latitude: number | null; longitude: number | null },
  now: number,
): Travel | null {
  const last = places.find((p) => p.latitude !== null && p.longitude !== null);
  if (!last || here.latitude === null || here.longitude === null) return null;
  const km = greatCircleKm(
    { latitude: last.latitude!, longitude: last.longitude! },
    { latitude: here.latitude, longitude: here.longitude },
  );
  const minutes = Math.max(0, Math.floor((now - last.at) / 60_000));
  const kmh = minutes > 0 ? km / (minutes / 60) : null;
  const impossible = km >= NEARBY_KM && (kmh === null || kmh > AIRLINER_KMH);
  return {
    fromCountry: last.country,
    km: Math.round(km),
    minutes,
    kmh: kmh === null ? null : Math.round(kmh),
    impossible,
  };
}
