/**
 * A browser family and a system read from a User-Agent: what the new-device mail names ("Chrome on macOS") and what
 * the fallback device key is made of (device-keys.ts). Families, not versions: a browser that updates itself each
 * month stays the same device. Only names from these lists ever reach a mail: the header is the client's to write,
 * and a mail quoting it would let a stranger put words ("all is fine, see evil.example") into our notice.
 */
export interface DeviceName {
  /** A browser or client family, or null when none of ours matches. */
  browser: string | null;
  /** An operating system, or null when none of ours matches. */
  system: string | null;
}

/** Most specific first: Edge, Opera and Samsung Internet also say "Chrome"; Chrome also says "Safari". */
const BROWSERS: readonly [RegExp, string][] = [
  [/\bEdg(e|A|iOS)?\//, "Edge"],
  [/\b(OPR|Opera)\//, "Opera"],
  [/\bSamsungBrowser\//, "Samsung Internet"],
  [/\bVivaldi\//, "Vivaldi"],
  [/\b(Firefox|FxiOS)\//, "Firefox"],
  [/\b(Chrome|CriOS|Chromium)\//, "Chrome"],
  [/\bVersion\/[\d.]+.*\bSafari\//, "Safari"],
  // Clients that are not browsers: SDKs and scripts signing in over the API.
  [/^node\b|\bnode-fetch\b|\bundici\b/i, "Node.js"],
  [/^Deno\//, "Deno"],
  [/^Bun\//, "Bun"],
  [/^curl\//, "curl"],
  [/^Dart\//, "Dart"],
  [/^okhttp\//, "OkHttp"],
];

/** iOS before macOS (an iPhone says "like Mac OS X"), Android and ChromeOS before Linux. */
const SYSTEMS: readonly [RegExp, string][] = [
  [/\b(iPhone|iPad|iPod)\b/, "iOS"],
  [/\bAndroid\b/, "Android"],
  [/\bCrOS\b/, "ChromeOS"],
  [/\bWindows\b/, "Windows"],
  [/\bMac OS X\b|\bMacintosh\b/, "macOS"],
  [/\bLinux\b/, "Linux"],
];

const first = (table: readonly [RegExp, string][], text: string) =>
  table.find(([pattern]) => pattern.test(text))?.[1] ?? null;

export function deviceNameOf(userAgent: string | null | undefined): DeviceName {
  // Headers are bounded by the platform; a shorter prefix still holds every token we look for.
  const text = (userAgent ?? "").slice(0, 512);
  return { browser: first(BROWSERS, text), system: first(SYSTEMS, text) };
}
