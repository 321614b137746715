// The legacy drawer (src/token-families/legacy/): refresh tokens from before token families keep working through the
// read-only D1 indexes and are moved onto a family at their next refresh. Goes with the drawer (docs/operations.md).
import { describe, expect, it } from "vitest";
import { NO_VERIFICATION, service, signUp, type WireSession } from "../../helpers";
import { basic, grantFor, postForm, provider, type TokenAnswer } from "../../oauth2/support";
import { type Counts, countingShards } from "../../support/counting-bindings";
import { allInShards, userD1 } from "../../support/shards";
import { legacyGrantToken, legacySession } from "./support";

describe("session tokens from before locators", () => {
  it("keeps refreshing a session from before locators through the D1 index", async () => {
    const svc = service(NO_VERIFICATION);
    const current = await signUp(svc);
    // A session as the previous release made it: no locator, its token in refresh_tokens.
    const { id: legacyId, token: legacyToken } = await legacySession(current.user.id);
    const response = await svc.post("/token", { refreshToken: legacyToken });
    expect(response.status).toBe(200);
    const next = (await response.json()) as WireSession;
    expect(next.refreshTokenId).toBe(legacyId);
    // Its successor starts a family: the session has a locator now, and the token names it.
    const row = await userD1(current.user.id)
      .prepare("SELECT locator FROM sessions WHERE id = ?")
      .bind(legacyId)
      .first<{ locator: string }>();
    expect(next.refreshToken.slice(0, 6)).toBe(row!.locator);
    // From then on it refreshes like any other session: one read, no write, the D1 index left alone.
    const counts: Counts = { reads: 0, writes: 0 };
    const counted = service({ ...NO_VERIFICATION, ...countingShards(counts) });
    const third = (await (
      await counted.post("/token", { refreshToken: next.refreshToken })
    ).json()) as WireSession;
    expect(counts.writes).toBe(0);
    // The legacy token again, past the grace window, is a replay: the session ends.
    const strict = service({ ...NO_VERIFICATION, AUTH_REFRESH_TOKEN_REUSE_INTERVAL: "0" });
    expect((await strict.post("/token", { refreshToken: legacyToken })).status).toBe(401);
    expect((await svc.post("/token", { refreshToken: third.refreshToken })).status).toBe(401);
  });

  it("signs out a session from before locators by its legacy token", async () => {
    const svc = service(NO_VERIFICATION);
    const current = await signUp(svc);
    const { id, token } = await legacySession(current.user.id);
    expect((await svc.post("/signout", { refreshToken: token })).status).toBe(200);
    expect(await allInShards("SELECT id FROM sessions WHERE id = ?", id)).toEqual([]);
  });
});

describe("OAuth2 refresh tokens from before grant-naming tokens", () => {
  it("moves a token from before (found through the D1 index) onto a family at its next refresh", async () => {
    const oauth2 = provider();
    const { client, tokens } = await grantFor(oauth2);
    // A token as the previous release made it: `ort_` + 43 characters, indexed in oauth2_refresh_tokens.
    const { grantId, legacy } = await legacyGrantToken(client.clientId);
    const refresh = (refreshToken: string, svc = oauth2) =>
      postForm(
        svc,
        "/oauth2/token",
        { grant_type: "refresh_token", refresh_token: refreshToken },
        basic(client),
      );
    const moved = await refresh(legacy);
    expect(moved.status).toBe(200);
    const successor = ((await moved.json()) as TokenAnswer).refresh_token!;
    expect(successor.slice(4, 36)).toBe(grantId.slice(3).replace(/-/g, ""));
    expect((await refresh(successor)).status).toBe(200);
    // The legacy token again, past the grace window, is a replay: the grant is revoked (its other token too).
    const strict = provider({ AUTH_REFRESH_TOKEN_REUSE_INTERVAL: "0" });
    expect((await refresh(legacy, strict)).status).toBe(400);
    expect((await refresh(tokens.refresh_token!)).status).toBe(400);
  });

  it("introspection sees such a token while it is current; revoking it ends the grant", async () => {
    const oauth2 = provider();
    const { client } = await grantFor(oauth2);
    const { grantId, legacy } = await legacyGrantToken(client.clientId);
    const introspect = async () =>
      (await (await postForm(oauth2, "/oauth2/introspect", { token: legacy }, basic(client))).json()) as {
        active: boolean;
        client_id?: string;
      };
    expect(await introspect()).toMatchObject({ active: true, client_id: client.clientId });
    expect((await postForm(oauth2, "/oauth2/revoke", { token: legacy }, basic(client))).status).toBe(200);
    expect(await introspect()).toEqual({ active: false });
    expect(await allInShards("SELECT id FROM oauth2_grants WHERE id = ?", grantId)).toEqual([]);
  });
});
