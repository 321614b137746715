import { type Config, parseConfig } from "../config";
import type { Env } from "../env";
import { useKeyStore } from "../signing-keys/stored-keys";
import { FEATURES } from "./features";

/** Every feature's settings slice, in the list's order (src/runtime/features.ts). */
const SLICES = FEATURES.flatMap((feature) => (feature.settings ? [feature.settings] : []));

const cache = new WeakMap<object, Config>();

/** The last env and its configuration: every request of an isolate brings the same env, checked before the map. */
let last: { env: object; config: Config } | undefined;

/**
 * The core settings and every feature's slice, parsed from the Worker's env. Parsed once per env object: Workers
 * reuse the env object across requests in an isolate.
 */

export function getConfig(env: object): Config {
  if (last?.env === env) return last.config;
  const cached = cache.get(env);
  if (cached) {
    last = { env, config: cached };
    return cached;
  }
  const config = parseConfig(env, SLICES);
  cache.set(env, config);
  last = { env, config };
  return config;
}

/**
 * The Worker's configuration as every entry point uses it (the fetch handler, the service binding's entrypoints):
 * `getConfig`, with the deployment's D1 attached as the store of signing keys rotated through the admin API
 * (src/signing-keys/stored-keys.ts), so a token signed by a rotated key verifies through either door.
 */
export function serviceConfig(env: Env): Config {
  const config = getConfig(env);
  useKeyStore(config, env.DB);
  return config;
}
