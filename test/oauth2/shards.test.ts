// The authorization server with users spread over the suite's two shards (src/db/shards.ts): a user's codes,
// grants and consents live in the user's shard, found from the code's slot and the grant id's; clients and device
// authorizations stay in the home database. Threats: a code or grant id that sends a lookup to the wrong shard (a
// grant that does not end when revoked, a user's tokens answered with another's rows), a made-up code that crashes
// the routing instead of being refused, and a deleted client whose grants live on in another shard.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { removeHomeRowsOfUser } from "../../src/db/client-rows";
import { slotOfUser } from "../../src/db/shards";
import { clientUsage, type WireClient } from "../../src/oauth2/clients";
import { decodeJwt, signUp, testDeps, type WireSession } from "../helpers";
import { allD1, allInShards, routedD1, testShards, userD1 } from "../support/shards";
import { Browser, signIn } from "./page-browser";
import {
  authorize,
  basic,
  codeFor,
  exchange,
  location,
  newClient,
  oauth2Error,
  postForm,
  provider,
  requestIdOf,
  s256,
  type TokenAnswer,
  VERIFIER,
} from "./support";

const svc = provider({ AUTH_OAUTH2_PROVIDER_REGISTRATION: "authenticated" });
const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

/** A new user whose rows live in shard `index` (user ids are random: sign up until one lands there). */
async function userInShard(index: number): Promise<WireSession> {
  for (let attempt = 0; attempt < 64; attempt++) {
    const session = await signUp(svc);
    if (testShards().indexOfUser(session.user.id) === index) return session;
  }
  throw new Error(`no user landed in shard ${index}`);
}

/** The shard that is not `userId`'s. */
const otherD1 = (userId: string) => allD1().find((d1) => d1 !== userD1(userId))!;

const rows = async (d1: D1Database, sql: string, ...values: unknown[]) =>
  (
    await d1
      .prepare(sql)
      .bind(...values)
      .all()
  ).results;

async function sha256Hex(value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

const introspect = (client: WireClient, token: string) =>
  postForm(svc, "/oauth2/introspect", { token }, basic(client));
const userinfo = (token: string) =>
  svc.request("GET", "/oauth2/userinfo", { headers: { authorization: `Bearer ${token}` } });

/** The code flow with PKCE for `session` (the external login UI's JSON step), and its first tokens. */
async function codeFlow(client: WireClient, session: WireSession) {
  const { code } = await codeFor(svc, client, session, {
    scope: "openid profile email offline_access",
    code_challenge: await s256(VERIFIER),
    code_challenge_method: "S256",
  });
  const answer = await exchange(svc, client, code, { code_verifier: VERIFIER });
  expect(answer.status).toBe(200);
  return { code, tokens: (await answer.json()) as TokenAnswer };
}

/** Through the built-in page: sign in, allow, exchange; the consent is remembered in the user's shard. */
async function consentOnPage(client: WireClient, session: WireSession) {
  const browser = new Browser(svc);
  const started = await authorize(svc, client, { scope: "openid email" });
  const requestId = await requestIdOf(started);
  await browser.get(location(started).toString());
  await signIn(browser, requestId, session.user.email);
  const allowed = await browser.post("/oauth2/interaction/consent", {
    request_id: requestId,
    decision: "allow",
  });
  const code = location(allowed).searchParams.get("code")!;
  expect((await exchange(svc, client, code)).status).toBe(200);
}

describe("the authorization server over two shards", () => {
  it("users of both shards go through code + PKCE, refresh, introspection, userinfo and revocation", async () => {
    const client = await newClient(svc);
    for (const index of [0, 1]) {
      const session = await userInShard(index);
      const userId = session.user.id;
      const { code, tokens } = await codeFlow(client, session);
      // The code names its user's slot, and its row is in that user's shard only.
      expect(code.slice(4, 7)).toBe(slotOfUser(userId).toString(16).padStart(3, "0"));
      const codeSql = "SELECT grant_id FROM oauth2_codes WHERE code_hash = ?";
      const codeHash = await sha256Hex(code);
      const grantId = String(decodeJwt(tokens.access_token).payload.grant_id);
      expect(await rows(userD1(userId), codeSql, codeHash)).toEqual([{ grant_id: grantId }]);
      expect(await rows(otherD1(userId), codeSql, codeHash)).toEqual([]);
      // The grant id routes to the user's shard, where its row is, and nowhere else.
      expect(routedD1(grantId.slice("og_".length))).toBe(userD1(userId));
      const grantSql = "SELECT user_id FROM oauth2_grants WHERE id = ?";
      expect(await rows(userD1(userId), grantSql, grantId)).toEqual([{ user_id: userId }]);
      expect(await rows(otherD1(userId), grantSql, grantId)).toEqual([]);

      expect(await (await userinfo(tokens.access_token)).json()).toMatchObject({ sub: userId });
      const refreshed = await postForm(
        svc,
        "/oauth2/token",
        { grant_type: "refresh_token", refresh_token: tokens.refresh_token! },
        basic(client),
      );
      expect(refreshed.status).toBe(200);
      const next = (await refreshed.json()) as TokenAnswer;
      expect(await (await introspect(client, next.access_token)).json()).toMatchObject({
        active: true,
        sub: userId,
      });
      expect(await (await introspect(client, next.refresh_token!)).json()).toMatchObject({
        active: true,
        sub: userId,
      });

      const revoked = await postForm(svc, "/oauth2/revoke", { token: next.refresh_token! }, basic(client));
      expect(revoked.status).toBe(200);
      expect(await (await introspect(client, next.access_token)).json()).toEqual({ active: false });
      await oauth2Error(await userinfo(next.access_token), 401, "invalid_token");
      expect(await allInShards(grantSql, grantId)).toEqual([]);
    }
  });

  it("revokes a grant of either shard through its access token", async () => {
    const client = await newClient(svc);
    for (const index of [0, 1]) {
      const { tokens } = await codeFlow(client, await userInShard(index));
      const grantId = String(decodeJwt(tokens.access_token).payload.grant_id);
      expect(
        (await postForm(svc, "/oauth2/revoke", { token: tokens.access_token }, basic(client))).status,
      ).toBe(200);
      expect(await allInShards("SELECT id FROM oauth2_grants WHERE id = ?", grantId)).toEqual([]);
      await oauth2Error(
        await postForm(
          svc,
          "/oauth2/token",
          { grant_type: "refresh_token", refresh_token: tokens.refresh_token! },
          basic(client),
        ),
        400,
        "invalid_grant",
      );
    }
  });

  it("refuses made-up codes, whatever shard they name, as invalid_grant", async () => {
    // Threat: a code crafted to name a slot (or none) reaching a shard it should not, or crashing the routing.
    const client = await newClient(svc);
    for (const code of [
      `oac_fff${"A".repeat(43)}`,
      `oac_000${"A".repeat(43)}`,
      `oac_${"A".repeat(43)}`,
      `oac_zzz${"A".repeat(43)}`,
      "oac_",
    ]) {
      await oauth2Error(await exchange(svc, client, code), 400, "invalid_grant");
    }
  });

  it("lists a client's users of both shards, and deleting the client ends their grants and consents in both", async () => {
    // Threat: a deleted client whose grants live on in a shard the deletion did not visit (no foreign key reaches
    // them there): its access tokens would still answer userinfo.
    const client = await newClient(svc);
    const people = [await userInShard(0), await userInShard(1)];
    const tokens: TokenAnswer[] = [];
    for (const session of people) {
      await consentOnPage(client, session);
      tokens.push((await codeFlow(client, session)).tokens);
    }
    const usage = await clientUsage(testDeps(env, { now: Date.now() }), client.clientId);
    const ids = people.map((session) => session.user.id).sort();
    expect([...new Set(usage.grants.map((grant) => grant.userId))].sort()).toEqual(ids);
    expect(usage.consents.map((consent) => consent.userId).sort()).toEqual(ids);
    expect(usage.grants.map((grant) => grant.userEmail)).toEqual(
      expect.arrayContaining(people.map((session) => session.user.email)),
    );
    // Newest first across the shards, as one database would list them.
    const times = usage.grants.map((grant) => grant.lastUsedAt);
    expect(times).toEqual([...times].sort((a, b) => b - a));

    const deleted = await svc.request("DELETE", `/admin/oauth2/clients/${client.clientId}`, {
      headers: { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) },
    });
    expect(deleted.status).toBe(204);
    for (const table of ["oauth2_grants", "oauth2_codes", "oauth2_consents"]) {
      expect(
        await allInShards(`SELECT client_id FROM ${table} WHERE client_id = ?`, client.clientId),
      ).toEqual([]);
    }
    for (const answer of tokens) await oauth2Error(await userinfo(answer.access_token), 401, "invalid_token");
  });

  it("gives a device approved by a user of shard 1 a grant in that shard; the authorization stays home", async () => {
    const client = await newClient(svc, {
      clientName: "Acme CLI",
      tokenEndpointAuthMethod: "none",
      grantTypes: [DEVICE_GRANT, "refresh_token"],
      redirectUris: [],
    });
    const session = await userInShard(1);
    const started = await postForm(svc, "/oauth2/device_authorization", {
      client_id: client.clientId,
      scope: "openid offline_access",
    });
    const device = (await started.json()) as { device_code: string; user_code: string };
    const browser = new Browser(svc);
    const entered = await browser.post("/oauth2/device", { user_code: device.user_code });
    const requestId = location(entered).searchParams.get("request_id")!;
    await browser.get(location(entered).toString());
    await signIn(browser, requestId, session.user.email);
    const approved = await browser.post("/oauth2/interaction/consent", {
      request_id: requestId,
      decision: "allow",
    });
    expect(approved.status).toBe(200);
    const home = "SELECT user_id FROM device_authorizations WHERE client_id = ?";
    expect(await rows(env.DB, home, client.clientId)).toEqual([{ user_id: session.user.id }]);

    const polled = await postForm(svc, "/oauth2/token", {
      grant_type: DEVICE_GRANT,
      device_code: device.device_code,
      client_id: client.clientId,
    });
    expect(polled.status).toBe(200);
    const answer = (await polled.json()) as TokenAnswer;
    const grantId = String(decodeJwt(answer.access_token).payload.grant_id);
    const grantSql = "SELECT user_id FROM oauth2_grants WHERE id = ?";
    expect(await rows(userD1(session.user.id), grantSql, grantId)).toEqual([{ user_id: session.user.id }]);
    expect(await rows(otherD1(session.user.id), grantSql, grantId)).toEqual([]);
    expect(await rows(env.DB, home, client.clientId)).toEqual([]);
    const refreshed = await postForm(svc, "/oauth2/token", {
      grant_type: "refresh_token",
      refresh_token: answer.refresh_token!,
      client_id: client.clientId,
    });
    expect(refreshed.status).toBe(200);
  });

  it("lets a user of shard 1 register a client of their own (authenticated registration)", async () => {
    const session = await userInShard(1);
    const response = await svc.request("POST", "/oauth2/register", {
      json: { client_name: "My CLI", redirect_uris: ["http://127.0.0.1/callback"] },
      headers: { authorization: `Bearer ${session.accessToken}` },
    });
    expect(response.status).toBe(201);
    const { client_id } = (await response.json()) as { client_id: string };
    const home = "SELECT registered_by_user_id AS owner FROM oauth2_clients WHERE client_id = ?";
    expect(await rows(env.DB, home, client_id)).toEqual([{ owner: session.user.id }]);
  });

  it("removes the home rows of a removed user of shard 1: their clients, with the grants of those in every shard", async () => {
    // Threat: a removed user's self-registered client living on (no foreign key reaches the user's shard).
    const owner = await userInShard(1);
    const registeredAnswer = await svc.request("POST", "/oauth2/register", {
      json: { client_name: "Owned", redirect_uris: ["https://rp.example.com/callback"] },
      headers: { authorization: `Bearer ${owner.accessToken}` },
    });
    const registered = (await registeredAnswer.json()) as { client_id: string; client_secret: string };
    const client = { clientId: registered.client_id, clientSecret: registered.client_secret } as WireClient;
    const { tokens } = await codeFlow(client, await userInShard(0));
    await userD1(owner.user.id).prepare("DELETE FROM users WHERE id = ?").bind(owner.user.id).run();
    await removeHomeRowsOfUser(testShards(), owner.user.id);
    expect(await rows(env.DB, "SELECT 1 FROM oauth2_clients WHERE client_id = ?", client.clientId)).toEqual(
      [],
    );
    expect(await allInShards("SELECT id FROM oauth2_grants WHERE client_id = ?", client.clientId)).toEqual(
      [],
    );
    await oauth2Error(await userinfo(tokens.access_token), 401, "invalid_token");
  });
});
