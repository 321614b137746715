import { toHex } from "../../lib/hex";
import { hmacSubkey } from "../../lib/subkeys";
import { expandIpv6 } from "../../rate-limits/client-address";
import type { DeviceName } from "./device-name";

/**
 * How a device is told apart, as stored in `user_devices.device_hash` (docs/protection.md, "New-device notice"):
 * - the device cookie, when the request carries it (a browser on the service's own pages and redirects, or an app
 *   that sends credentials);
 * - else the browser family, the system and the client's network (/24 of IPv4, /48 of IPv6): an app on another
 *   origin signs in with `fetch` without credentials, so the cookie never comes back, yet the same browser on the
 *   same network must not be mailed about on every sign-in.
 * Both are HMACs under a subkey of `AUTH_ENCRYPTION_KEY` over the user's id and the value: a leaked table names no
 * cookie and no network, and one browser's rows cannot be linked across users.
 */
export interface DeviceKeys {
  /** From the device cookie, when the request carried one. */
  cookie: string | null;
  /** From the browser family, system and network: always known. */
  network: string;
}

async function keyed(encryptionKey: string, userId: string, kind: string, value: string): Promise<string> {
  const key = await hmacSubkey(encryptionKey, "user-devices");
  const message = new TextEncoder().encode(`${userId}\n${kind}\n${value}`);
  return toHex(await crypto.subtle.sign("HMAC", key, message));
}

export async function deviceKeys(
  encryptionKey: string,
  userId: string,
  cookie: string | null,
  name: DeviceName,
  address: string | null,
): Promise<DeviceKeys> {
  const network = `${name.browser ?? "?"}\n${name.system ?? "?"}\n${networkOf(address)}`;
  return {
    cookie: cookie ? await keyed(encryptionKey, userId, "cookie", cookie) : null,
    network: await keyed(encryptionKey, userId, "network", network),
  };
}

/**
 * The network an address is in, as wide as one household's or office's addresses usually are: /24 of IPv4, /48 of
 * IPv6 (a site's prefix, RFC 6177), an IPv4-mapped IPv6 address as its IPv4. An address that is neither is kept
 * whole; no address (a request that did not come through Cloudflare) is "".
 */
export function networkOf(address: string | null): string {
  const value = address?.trim().toLowerCase() ?? "";
  if (!value) return "";
  if (!value.includes(":")) {
    const octets = value.split(".");
    return octets.length === 4 ? `${octets.slice(0, 3).join(".")}.0/24` : value;
  }
  const groups = expandIpv6(value);
  if (!groups) return value;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.0/24`;
  }
  return `${groups
    .slice(0, 3)
    .map((g) => g.toString(16))
    .join(":")}::/48`;
}
