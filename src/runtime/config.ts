import { type Config, parseConfig } from "../config";
import { FEATURES } from "./features";

/** Every feature's settings slice, in the list's order (src/runtime/features.ts). */
const SLICES = FEATURES.flatMap((feature) => (feature.settings ? [feature.settings] : []));

const cache = new WeakMap<object, Config>();

/**
 * The core settings and every feature's slice, parsed from the Worker's env. Parsed once per env object: Workers
 * reuse the env object across requests in an isolate.
 */
export function getConfig(env: object): Config {
  const cached = cache.get(env);
  if (cached) return cached;
  const config = parseConfig(env, SLICES);
  cache.set(env, config);
  return config;
}
