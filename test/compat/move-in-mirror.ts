// The Postgres mirror writing into the database a delta run of `import-nhost` reads (test/compat/move-in.test.ts): the
// shape where Hasura stays on Nhost, so the app's database is Nhost's own. The mirror's own writer
// (src/mirror/apply.ts) applies events as the queue consumer does, over Nhost's tables and their `updated_at` trigger.
import { createHash } from "node:crypto";
import type pg from "pg";
import { expect } from "vitest";
import type { EventType, StreamEvent } from "../../src/events/types";
import { applyEvent } from "../../src/mirror/apply";
import { ensureSchema, forgetSchema } from "../../src/mirror/schema";

let sequence = 1000;

async function mirror(db: pg.Client, type: EventType, subject: string, data: Record<string, unknown>) {
  const event: StreamEvent = {
    id: `evt_${crypto.randomUUID().replace(/-/g, "")}`,
    type,
    timestamp: new Date().toISOString(),
    subject,
    sequence: sequence++,
    data,
  };
  expect(await applyEvent(db, event, { bucket: async () => null })).toBe("written");
}

/** A user as the service's event stream carries it (no secrets: the mirror never writes any). */
const snapshot = (id: string, email: string) => ({
  id,
  createdAt: new Date(Date.now() - 60_000).toISOString(),
  updatedAt: new Date().toISOString(),
  lastSeen: null,
  disabled: false,
  displayName: "Renamed here",
  avatarUrl: "",
  locale: "en",
  email,
  emailVerified: true,
  newEmail: null,
  phoneNumber: null,
  phoneNumberVerified: false,
  defaultRole: "user",
  roles: ["user", "me"],
  isAnonymous: false,
  activeMfaType: null,
  metadata: null,
  providers: [],
});

/**
 * What the mirror writes after the cut-over: a user who signed up here (`here`), a moved user's row (a resync, or a
 * change here) and a sign-in of theirs here (`last_seen`, which Nhost's trigger stamps into `updated_at`).
 */
export async function mirrorWrites(
  db: pg.Client,
  here: { id: string; email: string },
  moved: { id: string; email: string },
): Promise<void> {
  forgetSchema();
  await ensureSchema(db);
  await mirror(db, "user.created", here.id, { user: snapshot(here.id, here.email) });
  await mirror(db, "user.updated", moved.id, { user: snapshot(moved.id, moved.email) });
  const signedIn = new Date(Date.now() + 1000).toISOString();
  await mirror(db, "session.created", moved.id, { session: { userId: moved.id, createdAt: signedIn } });
}

/** A refresh token Nhost hands out after the switch (an old client refreshing there): the token the client holds. */
export async function nhostRefresh(db: pg.Client, userId: string): Promise<string> {
  const token = crypto.randomUUID();
  await db.query(
    `INSERT INTO auth.refresh_tokens (user_id, expires_at, refresh_token_hash, type)
     VALUES ($1, now() + interval '30 days', $2, 'regular')`,
    [userId, `\\x${createHash("sha256").update(token).digest("hex")}`],
  );
  return token;
}
