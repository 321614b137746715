// The signing key set D1 cannot give, wherever a token of ours is checked: an ID token hint (authorize, end-session,
// CIBA) at a cold isolate, and a token of a key rotated in elsewhere at a warm one. Threat, each time: a database blip
// answered as the client's own mistake ("not an ID token we issued", "invalid access token"), which clients act on
// (give up the request, sign the user out), where the contract's answer is a 503 they retry. The session check and the
// Supabase face's getUser at a cold isolate: test/faults/d1-accounts.test.ts, test/faces/supabase/faults-and-audit.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { NO_VERIFICATION, service, signUp } from "../helpers";
import { answerTo, flow, partyOf, requestOf, rpOf } from "../oauth2/conformance/support";
import { basic, newClient, postForm, provider } from "../oauth2/support";
import { failingD1 } from "../support/faults";
import { expectOAuth2Unavailable } from "./support";

const CIBA_GRANT = "urn:openid:params:grant-type:ciba";
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };

/** An ID token of a finished code flow, and a provider at a cold isolate whose `signing_keys` read fails. */
async function hintAtColdIsolate(client?: Awaited<ReturnType<typeof newClient>>) {
  const svc = provider();
  const who = await partyOf(svc, rpOf(client ?? (await newClient(svc))));
  const idToken = (await flow(who)).tokens.id_token as string;
  const { binding, fault } = failingD1(env.DB, { match: /signing_keys/ });
  return { who, idToken, fault, cold: provider({ DB: binding }) };
}

describe("an id_token_hint at a cold isolate whose signing keys cannot be read", () => {
  it("authorize: 503, not a redirect to the client with invalid_request; the hint holds once D1 is back", async () => {
    const { who, idToken, fault, cold } = await hintAtColdIsolate();
    const answer = await answerTo(cold, requestOf(who.rp, { id_token_hint: idToken }));
    expect(answer.status, answer.headers.get("location") ?? "").toBe(503);
    expect(fault.failures).toBeGreaterThan(0);
    fault.heal();
    const healed = await answerTo(cold, requestOf(who.rp, { id_token_hint: idToken }));
    expect(healed.headers.get("location")).not.toContain("error=");
  });

  it("end-session: 503, not the page saying the sign-out link does not work", async () => {
    const { who, idToken, fault, cold } = await hintAtColdIsolate();
    const path = `/oauth2/logout?${new URLSearchParams({ id_token_hint: idToken, client_id: who.rp.clientId })}`;
    const answer = await cold.request("GET", path);
    expect(answer.status).toBe(503);
    expect(await answer.text()).not.toContain("does not work");
    fault.heal();
    expect((await cold.request("GET", path)).status).toBe(200);
  });

  it("CIBA: 503 temporarily_unavailable, not 400 invalid_request", async () => {
    const svc = provider();
    const client = await newClient(svc, {
      grantTypes: ["authorization_code", CIBA_GRANT, "refresh_token"],
      backchannelTokenDeliveryMode: "poll",
    });
    const { idToken, fault, cold } = await hintAtColdIsolate(client);
    const ask = () =>
      postForm(cold, "/oauth2/bc-authorize", { scope: "openid", id_token_hint: idToken }, basic(client));
    await expectOAuth2Unavailable(await ask());
    fault.heal();
    expect((await ask()).status).toBe(200);
  });
});

describe("a token of a key rotated in elsewhere, at a warm isolate whose key set cannot be re-read", () => {
  it("503, not 401: the keys the isolate had cannot say the new key is not ours", async () => {
    let failing = false;
    const match = { test: (sql: string) => failing && /signing_keys/.test(sql) } as unknown as RegExp;
    const { binding, fault } = failingD1(env.DB, { match });
    const warm = service({ ...NO_VERIFICATION, DB: binding });
    // Warm: this isolate's config has read and cached the key set.
    const before = await signUp(warm);
    expect((await warm.get("/user", before.accessToken)).status).toBe(200);
    // Another isolate (another config) rotates, and signs a token with the new key.
    const other = service(NO_VERIFICATION);
    expect((await other.request("POST", "/admin/keys/rotate", { headers: ADMIN })).status).toBe(201);
    const after = await signUp(other);
    // Past the unknown-kid recheck interval (1 s, src/signing-keys/keys.ts), with D1 failing.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    failing = true;
    const answer = await warm.get("/user", after.accessToken);
    failing = false;
    expect(answer.status, await answer.clone().text()).toBe(503);
    expect(fault.failures).toBe(1);
    expect((await warm.get("/user", after.accessToken)).status).toBe(200);
  });
});
