/**
 * The Postgres mirror (contract move-in §5.1, docs/hasura.md): Nhost's `auth` and `storage` tables of the app's
 * Postgres kept in step with the service's own data, from the event stream (src/events/), through the Hyperdrive
 * binding `MIRROR_DB`. Its feature.ts gives the queue handler (src/runtime/consumers.ts) its consumer and the admin
 * API its resync.
 */
import type { Config } from "../config";
import type { Env } from "../env";
import type { EventConsumer } from "../events/consume";
import { createMirrorConsumer } from "./consumer";

export { mirrorAdminRoutes } from "./resync-routes";

/**
 * The mirror's consumer of one batch of events, or null when no mirror is configured (no `MIRROR_DB` binding). Events
 * carry their rows; the consumer reads only buckets, which are global: the home database `DB`.
 */
export function mirrorConsumer(env: Env, _config: Config): EventConsumer | null {
  return env.MIRROR_DB ? createMirrorConsumer(env.MIRROR_DB, env.DB) : null;
}
