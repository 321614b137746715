// Tokens as the releases before token families made them (or the import from Nhost makes them), written straight into
// D1: the legacy drawer's tests and its fault tests (test/faults/second-factor-and-legacy.test.ts) start from them.
// Goes with the drawer (docs/operations.md, "Removing the legacy refresh path").
import { expect } from "vitest";
import { claim } from "../../../src/db/directory";
import { firstInAnyShard, testShards, userD1 } from "../../support/shards";

async function sha256(value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * A session as the release before locators made it: no locator, a random id, its token in refresh_tokens; in its
 * user's shard, and in the directory as the import from Nhost writes such a session (its id, its token's hash).
 */
export async function legacySession(userId: string): Promise<{ id: string; token: string }> {
  const id = crypto.randomUUID();
  const token = crypto.randomUUID();
  const now = Date.now();
  const hash = await sha256(token);
  const d1 = userD1(userId);
  await d1.batch([
    d1
      .prepare(
        "INSERT INTO sessions (id, user_id, created_at, last_used_at, expires_at) VALUES (?, ?, ?, ?, ?)",
      )
      .bind(id, userId, now, now, now + 3_600_000),
    d1
      .prepare("INSERT INTO refresh_tokens (token_hash, session_id, expires_at) VALUES (?, ?, ?)")
      .bind(hash, id, now + 3_600_000),
  ]);
  const entries = [
    { kind: "session" as const, value: id },
    { kind: "refresh" as const, value: hash },
  ];
  expect(await claim(testShards(), userId, entries, now)).toBeNull();
  return { id, token };
}

/**
 * A grant's refresh token as the release before grant-naming tokens made it: `ort_` + 43 characters, indexed in its
 * grant's shard (its user's), which no directory entry names.
 */
export async function legacyGrantToken(clientId: string): Promise<{ grantId: string; legacy: string }> {
  const grant = await firstInAnyShard<{ id: string; user_id: string }>(
    "SELECT id, user_id FROM oauth2_grants WHERE client_id = ?",
    clientId,
  );
  const legacy = `ort_${"L".repeat(11)}${crypto.randomUUID().replace(/-/g, "")}`;
  await userD1(grant!.user_id)
    .prepare("INSERT INTO oauth2_refresh_tokens (token_hash, grant_id, expires_at) VALUES (?, ?, ?)")
    .bind(await sha256(legacy), grant!.id, Date.now() + 3_600_000)
    .run();
  return { grantId: grant!.id, legacy };
}
