// The OAuth2 code exchange with a fault after the code was taken and the grant row written: the grant's family failing
// to start (`SessionFamilies.start`: overloaded, so it never started, or reset after it started), or D1 failing at the
// signing key's read that follows the grant (a cold isolate); and the single-use takes themselves (the code's, an
// approved device code's or CIBA request's) run by D1 with their answer lost. The threat named above each test is what
// it keeps out.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { WireClient } from "../../src/oauth2/clients";
import { auditTypesOf, decodeJwt, mailbox, signUp, uniqueEmail } from "../helpers";
import { Browser, signIn } from "../oauth2/page-browser";
import {
  basic,
  codeFor,
  exchange,
  ISSUER,
  location,
  newClient,
  oauth2Error,
  postForm,
  provider,
  s256,
  type TokenAnswer,
  VERIFIER,
} from "../oauth2/support";
import { failingNamespace, failingShards } from "../support/faults";
import { allInShards } from "../support/shards";
import { expectOAuth2Unavailable } from "./support";

const grantsOf = (clientId: string) =>
  allInShards("SELECT id FROM oauth2_grants WHERE client_id = ?", clientId);

/** A client, a signed-up user and a code of theirs (PKCE, with a refresh token), made through a healthy service. */
async function aCode() {
  const plain = provider();
  const client = await newClient(plain);
  const session = await signUp(plain);
  const pkce = { code_challenge: await s256(VERIFIER), code_challenge_method: "S256" };
  const { code } = await codeFor(plain, client, session, { scope: "openid offline_access", ...pkce });
  return { client, session, code };
}

/** The retry of an exchange answered 503: tokens, from one grant (the retry's), and nothing read as a replay. */
async function expectRetryRedeems(
  svc: ReturnType<typeof provider>,
  { client, session, code }: Awaited<ReturnType<typeof aCode>>,
) {
  const retry = await exchange(svc, client, code, { code_verifier: VERIFIER });
  expect(retry.status, await retry.clone().text()).toBe(200);
  expect(await retry.json()).toMatchObject({
    refresh_token: expect.any(String),
    id_token: expect.any(String),
  });
  expect(await grantsOf(client.clientId)).toHaveLength(1);
  expect(await auditTypesOf(session.user.id)).not.toContain("oauth2.grant-revoked");
  // The code is spent by the retry that redeemed it: a third use is a replay, as ever.
  expect((await exchange(svc, client, code, { code_verifier: VERIFIER })).status).toBe(400);
}

describe("the code exchange: the grant's family cannot start", () => {
  // Threat: a grant left behind that no answer carried and no token refreshes (listed among the user's authorized
  // apps, counted against them), and a client retry that then reads as a replay: the grant "revoked" for an attack
  // that never happened, in the user's audit trail. And the code the user authorized lost to a blip.
  it.each(["before", "after"] as const)(
    "%s the object acts: 503 temporarily_unavailable; no grant is left; the code is put back: the retry redeems it",
    async (when) => {
      const taken = await aCode();
      const { binding, fault } = failingNamespace(env.SESSION_FAMILIES, { match: /^start$/, when, times: 1 });
      const svc = provider({ SESSION_FAMILIES: binding });
      await expectOAuth2Unavailable(
        await exchange(svc, taken.client, taken.code, { code_verifier: VERIFIER }),
      );
      expect(fault.failures).toBe(1);
      // The grant row goes before the answer (the code's put-back), its family after it (waitUntil, which the
      // harness waits for).
      expect(await grantsOf(taken.client.clientId)).toEqual([]);
      await expectRetryRedeems(svc, taken);
    },
  );
});

describe("the token endpoint's own failure", () => {
  // Threat: a failure that is no platform fault (a bug) answered in the auth API's shape (`{status, message, error}`)
  // to an OAuth2 client, which reads RFC 6749's `error` only: it saw no error code, and its document said otherwise.
  // The answer is 500 `server_error` naming the request, whose log line has the cause; nothing of the cause is sent.
  it("500 server_error in RFC 6749's shape, naming the request, without the cause", async () => {
    const taken = await aCode();
    const { binding, fault } = failingNamespace(env.SESSION_FAMILIES, {
      match: /^start$/,
      times: 1,
      error: () => new Error("a bug, not the platform: secret detail"),
    });
    const answer = await exchange(provider({ SESSION_FAMILIES: binding }), taken.client, taken.code, {
      code_verifier: VERIFIER,
    });
    expect(fault.failures).toBe(1);
    expect(answer.status).toBe(500);
    expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
    expect(answer.headers.get("cache-control")).toBe("no-store");
    const body = (await answer.json()) as { error: string; error_description: string };
    expect(body).toEqual({
      error: "server_error",
      error_description: expect.stringMatching(/^the service failed; reference \S+$/),
    });
    expect(body.error_description).not.toContain("secret detail");
  });
});

describe("the code exchange: D1 fails after the grant was written", () => {
  // Threat: the signing key's read (a cold isolate's first, after the grant's insert) fails once: the 503 left the
  // grant row behind, and the client's retry read as a replay: 400 "the code was used before", the grant revoked and
  // `oauth2.grant-revoked` (code-replayed) written to the user's audit trail for an attack that never happened.
  it("503 temporarily_unavailable; the grant is removed and the code put back: the retry gets tokens", async () => {
    const taken = await aCode();
    // A fresh service: a cold isolate, whose key set is read from D1 when the tokens are signed.
    const { bindings, fault } = failingShards(env, { match: /^SELECT kid/, times: 1 });
    const svc = provider(bindings);
    await expectOAuth2Unavailable(await exchange(svc, taken.client, taken.code, { code_verifier: VERIFIER }));
    expect(fault.failures).toBe(1);
    expect(await grantsOf(taken.client.clientId)).toEqual([]);
    await expectRetryRedeems(svc, taken);
  });
});

describe("the code exchange: the code's own take runs and its answer is lost", () => {
  // Threat: D1 marks the code used (its take, one batch with the user's read) and the answer is lost: the 503 left the
  // code used, and the client's retry was refused as a use of a used code (invalid_grant): the user had to authorize
  // again for a blip. The take's put-back (by the grant id minted before it) makes the code unused again.
  it("503 temporarily_unavailable; the code is put back: the retry gets tokens from one grant, none revoked", async () => {
    const taken = await aCode();
    const { bindings, fault } = failingShards(env, {
      match: /^update "oauth2_codes" set "used_at"/,
      when: "after",
      times: 1,
    });
    const svc = provider(bindings);
    await expectOAuth2Unavailable(await exchange(svc, taken.client, taken.code, { code_verifier: VERIFIER }));
    expect(fault.failures).toBe(1);
    await expectRetryRedeems(svc, taken);
  });
});

const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const CIBA_GRANT = "urn:openid:params:grant-type:ciba";
/** The approved row's take (`redeemPolled`): the one statement on device_authorizations that asks for `approved`. */
const APPROVED_TAKE = /"device_authorizations".*"status" = \?/;
const GRANT_INSERT = /^insert into "oauth2_grants"/i;

/** Signs the person in on a page request (its redirect's `request_id`) and approves it. */
async function approve(browser: Browser, opened: Response, email: string) {
  expect(opened.status).toBe(303);
  const requestId = location(opened).searchParams.get("request_id")!;
  await signIn(browser, requestId, email);
  const decided = await browser.post("/oauth2/interaction/consent", {
    request_id: requestId,
    decision: "allow",
  });
  expect(decided.status).toBe(200);
}

/** A device code the person approved on the page, through a healthy service. */
async function anApprovedDeviceCode() {
  const plain = provider();
  const client = await newClient(plain, {
    tokenEndpointAuthMethod: "none",
    grantTypes: [DEVICE_GRANT],
    redirectUris: [],
  });
  const email = uniqueEmail();
  const { user } = await signUp(plain, email);
  const started = await postForm(plain, "/oauth2/device_authorization", {
    client_id: client.clientId,
    scope: "openid",
  });
  const { device_code, user_code } = (await started.json()) as { device_code: string; user_code: string };
  const browser = new Browser(plain);
  await approve(browser, await browser.post("/oauth2/device", { user_code }), email);
  const poll = (svc: ReturnType<typeof provider>) =>
    postForm(svc, "/oauth2/token", { grant_type: DEVICE_GRANT, device_code, client_id: client.clientId });
  return { client, user, poll };
}

/** A CIBA request (poll mode) the person approved through the mailed link, through a healthy service. */
async function anApprovedCibaRequest() {
  const plain = provider();
  const client: WireClient = await newClient(plain, {
    redirectUris: [],
    grantTypes: [CIBA_GRANT],
    backchannelTokenDeliveryMode: "poll",
  });
  const email = uniqueEmail();
  const { user } = await signUp(plain, email);
  const asked = await postForm(
    plain,
    "/oauth2/bc-authorize",
    { scope: "openid", login_hint: email },
    basic(client),
  );
  expect(asked.status, await asked.clone().text()).toBe(200);
  const { auth_req_id } = (await asked.json()) as { auth_req_id: string };
  const [mail] = await mailbox(plain, email);
  const link = /(http\S+\/oauth2\/ciba\?request=[A-Za-z0-9_-]+)/.exec(mail?.text ?? "")?.[1];
  expect(link).toBeDefined();
  const browser = new Browser(plain);
  await approve(browser, await browser.get(link!.replace(ISSUER, "")), email);
  const poll = (svc: ReturnType<typeof provider>) =>
    postForm(svc, "/oauth2/token", { grant_type: CIBA_GRANT, auth_req_id }, basic(client));
  return { client, user, poll };
}

describe("the device and CIBA grants: the approved row's own take runs and its answer is lost", () => {
  // Threat: D1 takes the approved authorization (it was one `DELETE … RETURNING`) and the answer is lost: the device
  // or agent heard 503 and its next poll invalid_grant, so the person who approved on their phone (or in the mail) had
  // to start over. The take is a claim that its own fault puts back: the next poll redeems it, once.
  // And the grant's own insert whose answer is lost (it ran): the approval was put back, but the grant stayed beside
  // the next poll's, one no answer carried (in the user's authorized apps). Its id is minted first and it goes.
  it.each([
    ["a device code", "the take", anApprovedDeviceCode, APPROVED_TAKE],
    ["a CIBA request", "the take", anApprovedCibaRequest, APPROVED_TAKE],
    ["a device code", "the grant's insert", anApprovedDeviceCode, GRANT_INSERT],
    ["a CIBA request", "the grant's insert", anApprovedCibaRequest, GRANT_INSERT],
  ] as const)(
    "%s, %s: 503, then the next poll gets the tokens, then invalid_grant",
    async (_, __, approved, lost) => {
      const { client, user, poll } = await approved();
      const { bindings, fault } = failingShards(env, { match: lost, when: "after", times: 1 });
      const svc = provider(bindings);
      await expectOAuth2Unavailable(await poll(svc));
      expect(fault.failures).toBe(1);
      const tokens = await poll(svc);
      expect(tokens.status, await tokens.clone().text()).toBe(200);
      const answer = (await tokens.json()) as TokenAnswer;
      expect(decodeJwt(answer.access_token).payload).toMatchObject({ sub: user.id });
      await oauth2Error(await poll(svc), 400, "invalid_grant");
      expect(await grantsOf(client.clientId)).toHaveLength(1);
      // The claimed row is deleted after the answer that redeemed it (waitUntil, which the harness waits for).
      const left = await env.DB.prepare("SELECT kind FROM device_authorizations WHERE client_id = ?")
        .bind(client.clientId)
        .all();
      expect(left.results).toEqual([]);
    },
  );
});
