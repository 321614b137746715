// Provider identities with users spread over the suite's two shards (src/db/shards.ts): an identity's row lives in
// its user's shard, and the directory (src/db/directory.ts) says whose it is. Threats: an identity of a user in one
// shard signing up a second account in another (a split account, or a takeover of the identity's sign-in), one
// identity linked to two users in two shards, and an abandoned claim that blocks an identity forever.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CLAIM_WINDOW_MS, claim, ownerOf } from "../../src/db/directory";
import { sessionFromRefresh, signUp, uniqueEmail, type WireSession } from "../helpers";
import { allD1, testShards, userD1 } from "../support/shards";
import { signInWith, withProviders } from "./support";

const svc = withProviders();
const uniqueId = () => String(Math.floor(Math.random() * 1e12));

async function userInShard(index: number): Promise<WireSession> {
  for (let attempt = 0; attempt < 64; attempt++) {
    const session = await signUp(svc);
    if (testShards().indexOfUser(session.user.id) === index) return session;
  }
  throw new Error(`no user landed in shard ${index}`);
}

const identity = (id: string) => ({ kind: "provider" as const, value: `github:${id}` });

/** The users each shard links the GitHub identity `id` to, home first. */
async function linksOf(id: string): Promise<string[][]> {
  return Promise.all(
    allD1().map(async (d1) => {
      const { results } = await d1
        .prepare("SELECT user_id FROM user_providers WHERE provider = 'github' AND provider_user_id = ?")
        .bind(id)
        .all<{ user_id: string }>();
      return results.map((row) => row.user_id);
    }),
  );
}

/** The user a GitHub sign-in as `id` lands on (an error code when it lands on none). */
async function signedInAs(id: string, email?: string): Promise<string> {
  const { back } = await signInWith(
    svc,
    "github",
    {},
    { fake_id: id, ...(email ? { fake_email: email } : {}) },
  );
  const refreshToken = back.searchParams.get("refreshToken");
  if (!refreshToken) return `error:${back.searchParams.get("error")}`;
  return (await sessionFromRefresh(svc, refreshToken)).user.id;
}

describe("provider identities over two shards", () => {
  it("an identity linked to a user of either shard signs that user in, not a new one", async () => {
    for (const index of [0, 1]) {
      const session = await userInShard(index);
      const id = uniqueId();
      const linked = await signInWith(svc, "github", { connect: session.accessToken }, { fake_id: id });
      expect(linked.back.searchParams.get("error")).toBeNull();
      const expected = [[], []] as string[][];
      expected[index] = [session.user.id];
      expect(await linksOf(id)).toEqual(expected);
      expect(await ownerOf(testShards(), identity(id))).toBe(session.user.id);
      // No email from the provider: only the identity can lead to the account.
      expect(await signedInAs(id)).toBe(session.user.id);
      expect(await signedInAs(id, uniqueEmail())).toBe(session.user.id);
    }
  });

  it("a provider sign-up puts the new user and its identity in one shard, with both keys in the directory", async () => {
    const id = uniqueId();
    const email = uniqueEmail("gh");
    const userId = await signedInAs(id, email);
    const index = testShards().indexOfUser(userId);
    const expected = [[], []] as string[][];
    expected[index] = [userId];
    expect(await linksOf(id)).toEqual(expected);
    const user = await userD1(userId).prepare("SELECT email FROM users WHERE id = ?").bind(userId).first();
    expect(user).toEqual({ email });
    expect(await ownerOf(testShards(), identity(id))).toBe(userId);
    expect(await ownerOf(testShards(), { kind: "email", value: email })).toBe(userId);
    expect(await signedInAs(id)).toBe(userId);
  });

  it("an identity of a user in one shard cannot be linked to a user in the other", async () => {
    // Threat: the unique index of one shard cannot see the other's rows; the directory must refuse instead.
    for (const [from, to] of [
      [0, 1],
      [1, 0],
    ]) {
      const owner = await userInShard(from!);
      const other = await userInShard(to!);
      const id = uniqueId();
      await signInWith(svc, "github", { connect: owner.accessToken }, { fake_id: id });
      const taken = await signInWith(svc, "github", { connect: other.accessToken }, { fake_id: id });
      expect(taken.back.searchParams.get("error")).toBe("provider-account-already-linked");
      const expected = [[], []] as string[][];
      expected[from!] = [owner.user.id];
      expect(await linksOf(id)).toEqual(expected);
      expect(await signedInAs(id)).toBe(owner.user.id);
    }
  });

  it("links an identity again to the user who has it, without a second row", async () => {
    const session = await userInShard(1);
    const id = uniqueId();
    for (let time = 0; time < 2; time++) {
      const linked = await signInWith(svc, "github", { connect: session.accessToken }, { fake_id: id });
      expect(linked.back.searchParams.get("error")).toBeNull();
    }
    expect(await linksOf(id)).toEqual([[], [session.user.id]]);
  });

  it("a claim of the identity by someone else is refused while young, and taken over once stale", async () => {
    // Threat: a request that died between its claim and its write blocking the identity for good, or a claim being
    // taken over while its own write may still be on its way.
    const shards = testShards();
    const id = uniqueId();
    const session = await userInShard(1);
    await claim(shards, crypto.randomUUID(), [identity(id)], Date.now());
    const young = await signInWith(svc, "github", { connect: session.accessToken }, { fake_id: id });
    expect(young.back.searchParams.get("error")).toBe("provider-account-already-linked");
    expect(await linksOf(id)).toEqual([[], []]);

    const stale = uniqueId();
    await claim(shards, crypto.randomUUID(), [identity(stale)], Date.now() - CLAIM_WINDOW_MS - 60_000);
    const taken = await signInWith(svc, "github", { connect: session.accessToken }, { fake_id: stale });
    expect(taken.back.searchParams.get("error")).toBeNull();
    expect(await linksOf(stale)).toEqual([[], [session.user.id]]);
    expect(await ownerOf(shards, identity(stale))).toBe(session.user.id);
    expect(await signedInAs(stale)).toBe(session.user.id);
  });

  it("signs in with a Google ID token a user of shard 1 linked before, through the directory", async () => {
    const session = await userInShard(1);
    const sub = `g-${crypto.randomUUID()}`;
    const mint = async () => {
      const now = Math.floor(Date.now() / 1000);
      const minted = await env.OUTBOUND!.fetch("https://oidc.fake/__mint", {
        method: "POST",
        body: JSON.stringify({ iss: "https://oidc.fake", aud: "ios-client", iat: now, exp: now + 300, sub }),
      });
      return minted.text();
    };
    const idTokens = withProviders({ AUTH_PROVIDER_GOOGLE_AUDIENCE: "ios-client" });
    const link = await idTokens.post(
      "/link/idtoken",
      { provider: "google", idToken: await mint() },
      session.accessToken,
    );
    expect(link.status).toBe(200);
    const signIn = await idTokens.post("/signin/idtoken", { provider: "google", idToken: await mint() });
    expect(signIn.status).toBe(200);
    const body = (await signIn.json()) as { session: WireSession };
    expect(body.session.user.id).toBe(session.user.id);
  });
});
