import { ConfigError } from "../errors";
import { isLoopbackHost } from "../lib/loopback";

/**
 * The app's synchronous hooks (contract move-in §5.3): each is `AUTH_HOOK_<NAME>_URL` with `AUTH_HOOK_<NAME>_SECRET`
 * (`whsec_…`, Standard Webhooks). A hook set is called where it applies and decides there (call.ts); an unset one
 * changes nothing.
 */
export const HOOK_NAMES = ["BEFORE_USER_CREATED", "CUSTOM_ACCESS_TOKEN", "SEND_EMAIL", "SEND_SMS"] as const;
export type HookName = (typeof HOOK_NAMES)[number];

export interface HookEndpoint {
  url: string;
  /** `whsec_` and the base64 of the key; the signature's HMAC key is the decoded bytes. */
  secret: string;
  /** `AUTH_OUTBOUND_ALLOW_LOCAL` where it counts: loopback URLs pass the outbound-URL policy (call.ts). */
  allowLoopback: boolean;
}

export type HooksConfig = Partial<Record<HookName, HookEndpoint>>;

/** Standard Webhooks' advice for a secret: 24 to 64 random bytes. */
const MIN_SECRET_BYTES = 24;
const MAX_SECRET_BYTES = 64;

function secretBytes(secret: string): number | null {
  if (!secret.startsWith("whsec_")) return null;
  try {
    return atob(secret.slice("whsec_".length)).length;
  } catch {
    return null;
  }
}

/** Why a hook URL cannot be one, or null: https without credentials, or loopback (any web scheme) where allowed. */
function urlProblem(value: string, allowLoopback: boolean): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "not an absolute URL";
  }
  if (url.username || url.password) return "a URL with credentials";
  if (allowLoopback && url.protocol === "http:" && isLoopbackHost(url.hostname)) return null;
  return url.protocol === "https:" ? null : "not https";
}

/**
 * Every `AUTH_HOOK_*` setting, checked at start-up: a URL without its secret (or the reverse), a secret that is not
 * `whsec_` and base64, or a URL that is not https (loopback over http only with `AUTH_OUTBOUND_ALLOW_LOCAL` on a local
 * server) stops the service with the name of the setting. Each call checks the URL again against the outbound-URL
 * policy (call.ts; this module cannot import it: config.ts imports this one).
 */
export function parseHooks(env: Record<string, unknown>, allowLoopback: boolean): HooksConfig {
  const hooks: HooksConfig = {};
  for (const name of HOOK_NAMES) {
    const endpoint = parseHook(env, name, allowLoopback);
    if (endpoint) hooks[name] = endpoint;
  }
  return hooks;
}

/**
 * One hook's `AUTH_HOOK_<name>_URL` and `_SECRET` under the rules above, or undefined when neither is set: also for a
 * hook a feature declares in its own settings (src/password-migration/settings.ts).
 */
export function parseHook(
  env: Readonly<Record<string, unknown>>,
  name: string,
  allowLoopback: boolean,
): HookEndpoint | undefined {
  const url = env[`AUTH_HOOK_${name}_URL`];
  const secret = env[`AUTH_HOOK_${name}_SECRET`];
  const urlSet = typeof url === "string" && url !== "";
  const secretSet = typeof secret === "string" && secret !== "";
  if (!urlSet && !secretSet) return undefined;
  if (!urlSet || !secretSet) {
    throw new ConfigError(
      `invalid configuration: AUTH_HOOK_${name}_URL and AUTH_HOOK_${name}_SECRET must be set together`,
    );
  }
  const problem = urlProblem(url, allowLoopback);
  if (problem) throw new ConfigError(`invalid configuration: AUTH_HOOK_${name}_URL: ${problem}`);
  const bytes = secretBytes(secret);
  if (bytes === null || bytes < MIN_SECRET_BYTES || bytes > MAX_SECRET_BYTES) {
    throw new ConfigError(
      `invalid configuration: AUTH_HOOK_${name}_SECRET must be whsec_ and the base64 of ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} random bytes`,
    );
  }
  return { url, secret, allowLoopback };
}
