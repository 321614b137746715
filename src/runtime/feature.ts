import type { Hono } from "hono";
import type { SignInHooks } from "../auth";
import type { Config, FeatureSettingsSlice } from "../config";
import type { EventConsumer } from "../events/consume";
import type { QueueRole } from "../events/queues";
import type { AppEnv } from "../http/app-env";
import type { Deps } from "../http/deps";

/**
 * Where a feature's routes are mounted (src/runtime/app.ts), each with what its requests pass first:
 * - `root`: at `/`, outside the APIs (the discovery documents RFC 8414 puts at the host's root, Nhost's old links);
 * - `auth`: the auth API, at `AUTH_API_PREFIX`, behind its CORS, no-store, body limit and flood guard;
 * - `pages`: the person's pages at the same prefix, after the API's routes (the account center);
 * - `admin`: the admin API, at `{AUTH_API_PREFIX}/admin`, behind the admin secret (contract §10);
 * - `console`: the admin console's pages, at `{AUTH_API_PREFIX}/admin/console`, 404 without an admin secret;
 * - `storage`: the storage API, at `STORAGE_API_PREFIX`, one app with its own CORS and error shape (storage §3.1).
 */
export type Surface = "root" | "auth" | "pages" | "admin" | "console" | "storage";

/** A feature's routes by surface; each is a sub-app, so its own `onError` answers for its routes. */
export type FeatureRoutes = Partial<Record<Surface, Hono<AppEnv>>>;

/** The queues a feature consumes itself (wrangler.toml), by role: the event stream and dead letters are the runtime's. */
export type OwnQueue = Exclude<QueueRole, "events" | "deadLetters">;

/**
 * What a feature declares about itself: the runtime (src/runtime/) mounts its routes, runs its consumers and its
 * housekeeping, drizzle-kit reads its tables, and the lint (.dependency-cruiser.cjs) knows its folder, all from the
 * one list in src/runtime/features.ts. Every part but the name may be absent.
 */
export interface Feature {
  /** Its folder under src/ (the lint and drizzle-kit find it by that name). */
  readonly name: string;
  /**
   * Its settings slice (its settings.ts): the environment variables it reads and the `config.<slice>` they become;
   * src/runtime/config.ts parses every feature's with the core.
   */
  readonly settings?: FeatureSettingsSlice;
  /** Its tables: src/db/tables/<name>.ts, which drizzle-kit reads and src/db/schema.ts gathers. */
  readonly tables?: Readonly<Record<string, unknown>>;
  /** Its routes by surface, built once per configuration. */
  readonly routes?: (config: Config) => FeatureRoutes;
  /** Its consumer of the event stream (the EVENTS queue), made per batch; null when it is not set up here. */
  readonly eventConsumer?: (services: Deps) => Promise<EventConsumer | null> | EventConsumer | null;
  /** The queues it consumes itself. */
  readonly queues?: Partial<
    Record<OwnQueue, (batch: MessageBatch<unknown>, services: Deps) => Promise<void>>
  >;
  /** What it records when one of its messages became a dead letter (a webhook delivery marked failed). */
  readonly deadLetter?: (body: unknown, services: Deps) => Promise<void>;
  /**
   * What it adds to every sign-in (src/auth/sign-in/pipeline.ts): a check before the first factor, a gate after it
   * and before the session, a check before a user is created.
   */
  readonly signInHooks?: SignInHooks;
  /** The daily cron's sweep of what it keeps past its use (expired rows, abandoned uploads). */
  readonly housekeeping?: (services: Deps, now: number) => Promise<void>;
  /** What must happen within the minute it is due (a timed ban lifted), run by the every-minute cron. */
  readonly everyMinute?: (services: Deps, now: number) => Promise<void>;
}
