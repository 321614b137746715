// Users made to land in a chosen shard (src/db/shards.ts): a user's shard follows from its random id, so users are
// signed up until one lands where a test wants it (each shard takes half of them: two tries on average).
import { signUp, type TestService, type WireSession } from "../helpers";
import { testShards } from "../support/shards";

/** The names of the suite's shards' bindings, home first (vitest.config.ts). */
export const shardNames = (bindings: Record<string, unknown>): string[] =>
  String(bindings.AUTH_D1_SHARDS ?? "DB").split(",");

/** What `make` signs in (a sign-up, an anonymous sign-in), made again until its user lives in shard `index`. */
export async function landInShard(index: number, make: () => Promise<WireSession>): Promise<WireSession> {
  for (let tries = 0; tries < 64; tries++) {
    const session = await make();
    if (testShards().indexOfUser(session.user.id) === index) return session;
  }
  throw new Error(`no user landed in shard ${index} in 64 tries`);
}

/** A signed-up user (and session) whose rows live in shard `index`. */
export const signUpInShard = (svc: TestService, index: number) => landInShard(index, () => signUp(svc));

/** One user in each shard, home first. */
export async function signUpInEachShard(svc: TestService): Promise<WireSession[]> {
  const sessions: WireSession[] = [];
  for (let index = 0; index < testShards().count; index++) sessions.push(await signUpInShard(svc, index));
  return sessions;
}
