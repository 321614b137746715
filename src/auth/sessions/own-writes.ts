import { eq } from "drizzle-orm";
import { createMiddleware } from "hono/factory";
import { BOOKMARK_HEADER, primaryBookmark } from "../../db/replica";
import { sessions } from "../../db/schema";
import type { AppEnv } from "../../http/app-env";
import { documentedHeader } from "../../http/documented";
import { raiseFamilyBookmark } from "../../token-families";

/**
 * For a route that changes the caller's own user row and whose change the client reads back at once (deanonymize,
 * TOTP on or off): nhost-js refreshes the session to see it, an app may call `GET /user`. After a successful answer
 * the primary's bookmark goes
 * - to the family of the session that made the change (the token's `sid`), so that session's next refresh reads D1
 *   at least that fresh, whichever replica serves it;
 * - to the answer's `x-d1-bookmark` header, for a client that sends it back on its next `GET /user`.
 * Docs/decisions.md, "Reads near the user", has the whole consistency argument. One extra round trip to the primary
 * and one object call, on these rare writes only.
 */
export const readsOwnWriteBack = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  if (!c.res.ok) return;
  const { deps, auth } = c.var;
  // The caller's own row, and its session's, are in the caller's shard: the bookmark is that database's.
  const db = auth ? deps.shards.ofUser(auth.sub) : deps.shards.home;
  const bookmark = await primaryBookmark(db.$client);
  if (!bookmark) return;
  const sessionId = auth?.sid;
  if (sessionId) {
    const session = await db
      .select({ locator: sessions.locator })
      .from(sessions)
      .where(eq(sessions.id, sessionId))
      .get();
    if (session?.locator) await raiseFamilyBookmark(deps, session.locator, sessionId, bookmark);
  }
  c.header(BOOKMARK_HEADER, bookmark);
});

/** `GET /user`'s optional header, for the document. */
export const acceptsBookmark = documentedHeader(
  createMiddleware<AppEnv>(async (_c, next) => next()),
  {
    name: BOOKMARK_HEADER,
    description:
      "Optional. The `x-d1-bookmark` an earlier answer of this service carried (after deanonymizing or changing " +
      "MFA): the user is read at least as fresh as that change. Without it a nearby read replica may answer " +
      "with a row up to its replication lag old (docs/decisions.md, “Reads near the user”).",
  },
);
