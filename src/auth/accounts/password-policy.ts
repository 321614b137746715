import { AppError } from "../../errors";
import { logError } from "../../http/context";
import type { Deps } from "../../http/deps";
import { toHex } from "../../lib/hex";

/**
 * The password policy of sign-up, reset and change: `AUTH_PASSWORD_MIN_LENGTH`, then, with
 * `AUTH_PASSWORD_HIBP_ENABLED`, the Have I Been Pwned range API. Only the first five hex digits of the SHA-1 leave
 * the service (k-anonymity), and `Add-Padding` hides the answer's size.
 */
export async function checkPasswordPolicy(deps: Deps, password: string): Promise<void> {
  const { config } = deps;
  if (password.length < config.password.minLength) {
    throw new AppError(
      "password-too-short",
      `password must be at least ${config.password.minLength} characters`,
    );
  }
  if (config.password.hibp.enabled && (await isBreached(deps, password))) {
    throw new AppError("password-in-hibp-database");
  }
}

async function isBreached(deps: Deps, password: string): Promise<boolean> {
  const sha1 = toHex(await crypto.subtle.digest("SHA-1", new TextEncoder().encode(password))).toUpperCase();
  const [prefix, suffix] = [sha1.slice(0, 5), sha1.slice(5)];
  let body: string;
  try {
    const response = await deps.outbound(`${deps.config.password.hibp.url}/${prefix}`, {
      headers: { "Add-Padding": "true", "User-Agent": "edge-auth" },
    });
    if (!response.ok) throw new Error(`HIBP answered ${response.status}`);
    body = await response.text();
  } catch (error) {
    // Fail open: an outage of a third party must not stop every sign-up. The log says it happened.
    logError(deps.requestId, "hibp-unavailable", error, "warn");
    return false;
  }
  return body.split("\n").some((line) => {
    const [candidate, count] = line.trim().split(":");
    return candidate === suffix && Number(count) > 0;
  });
}
