import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { decodeJwt, NO_VERIFICATION, sessionFromRefresh, type TestService } from "../helpers";
import { waveService } from "../support/waves";
import {
  APP,
  location,
  openIn,
  type SamlOrg,
  samlOrg,
  samlService,
  startSignIn,
} from "./saml-support/connection";
import { signedResponse, toBase64 } from "./saml-support/idp";

// Issue 48, "Round trips": the SAML ACS's POST in waves (test/support/waves.ts, the recording bindings of `npm run
// bench:latency`, whose "SAML ACS (POST)" row measures the same path with delays). Its budget is 2: the connection's
// settings (the signature needs its certificates), then the assertion ID spent and the identity kept in one D1 batch.
// The same batch must keep the ID single use: a replay keeps nothing, and two posts of one response at once sign in
// at most once. And the GET in trips in line (`inLine`): 3 with one shard (the take ∥ the connection; the user's row ∥
// the domain check ∥ the membership ∥ the factors ∥ the device; the session ∥ the membership's write), 4 with two (the
// directory's read on top). Its refusals, each with nothing written, are in ./saml-acs-get.test.ts.

const overrides = {
  ...NO_VERIFICATION,
  AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS: "https://app.example.com",
};
const svc = samlService();
const waves = waveService(overrides);
// One shard (the home database holds every row), as `npm run bench:latency` runs by default.
const ONE_SHARD = { AUTH_D1_SHARDS: "DB" };
const svcOne = samlService(ONE_SHARD);
const wavesOne = waveService({ ...overrides, ...ONE_SHARD });

/** A sign-in started in a fresh browser and the IdP's signed answer to it, as the ACS's form body. */
async function answered(org: SamlOrg, email: string, through = svc) {
  const started = await startSignIn(through, email);
  const xml = await signedResponse({
    spEntityId: org.spEntityId,
    acsUrl: org.acsUrl,
    nameId: email,
    inResponseTo: started.requestId,
  });
  return { ...started, body: new URLSearchParams({ SAMLResponse: toBase64(xml) }).toString() };
}

const post = (org: SamlOrg, body: string) =>
  waves.request("POST", org.acsUrl, {
    body,
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });

describe("the SAML ACS's POST: two waves", () => {
  it("reads the connection, then spends the assertion ID and keeps the result in one batch; the sign-in finishes", async () => {
    // Threat (of speed): the ID's insert and the result's update back in line, a second cross-region trip to the
    // primary on every enterprise sign-in.
    const org = await samlOrg();
    const email = `erin@${org.domain}`;
    const signIn = await answered(org, email);
    const { response, waves: count } = await post(org, signIn.body);
    expect(response.status, await response.clone().text()).toBe(303);
    expect(count.sequential, count.trace).toBe(2);
    // Two waves at the primary and nothing else; the expired IDs' prune (after the answer) may start beside the batch.
    expect(count.perKind).toEqual([expect.stringMatching(/^d1-primary 2\/[23]$/)]);
    const landed = location(await openIn(svc, location(response), signIn.cookie));
    expect(landed.origin + landed.pathname).toBe(APP);
    expect(landed.searchParams.get("refreshToken"), landed.href).toBeTruthy();
  });

  it("keeps the ID single use in that batch: a replay keeps nothing, two posts at once sign in once", async () => {
    // Threat: a replayed response (from a proxy log, a browser's history) or a double post of the IdP's form keeping
    // a result a second time now that the spend and the keep run in one batch.
    const org = await samlOrg();
    const email = `frank@${org.domain}`;
    const first = await answered(org, email);
    const both = await Promise.all([post(org, first.body), post(org, first.body)]);
    const statuses = both.map(({ response }) => response.status).sort();
    expect(statuses).toEqual([303, 400]);
    const refused = both.find(({ response }) => response.status === 400)!.response;
    expect(await refused.json()).toMatchObject({
      error: "sso-assertion-invalid",
      message: expect.stringMatching(/already used \(replay\)/),
    });
    // Posted again once its sign-in finished: still a replay, and no second result to take.
    const accepted = both.find(({ response }) => response.status === 303)!.response;
    const landed = location(await openIn(svc, location(accepted), first.cookie));
    expect(landed.searchParams.get("refreshToken"), landed.href).toBeTruthy();
    const again = await post(org, first.body);
    expect(again.response.status).toBe(400);
    expect(((await again.response.json()) as { error: string }).error).toBe("sso-assertion-invalid");
  });

  it("keeps nothing for another sign-in's response that reuses a spent assertion ID", async () => {
    // Threat: the batch's keep no longer conditional on the ID being unseen. An IdP (or an attacker replaying its
    // assertion inside another signed response) reusing an ID would then be refused as a replay but still have
    // answered the other sign-in: its request marked as answered with a result nobody was given.
    const org = await samlOrg();
    const email = `hal@${org.domain}`;
    const assertionId = `_reused-${crypto.randomUUID()}`;
    const respond = async (inResponseTo: string, id?: string) =>
      new URLSearchParams({
        SAMLResponse: toBase64(
          await signedResponse({
            spEntityId: org.spEntityId,
            acsUrl: org.acsUrl,
            nameId: email,
            inResponseTo,
            ...(id ? { assertionId: id } : {}),
          }),
        ),
      }).toString();
    const a = await startSignIn(svc, email);
    const b = await startSignIn(svc, email);
    expect((await post(org, await respond(a.requestId, assertionId))).response.status).toBe(303);
    const reused = await post(org, await respond(b.requestId, assertionId));
    expect(await reused.response.json()).toMatchObject({ message: expect.stringMatching(/replay/) });
    // B's sign-in is still under way: a response of its own, with a fresh ID, finishes it.
    const fresh = await post(org, await respond(b.requestId));
    expect(fresh.response.status, await fresh.response.clone().text()).toBe(303);
    const landed = location(await openIn(svc, location(fresh.response), b.cookie));
    expect(landed.searchParams.get("refreshToken"), landed.href).toBeTruthy();
  });

  it("spends the ID even when no sign-in under way matches (an unknown InResponseTo)", async () => {
    // Threat: a response refused for its InResponseTo left unspent, so that the same assertion could be tried again.
    const org = await samlOrg();
    const email = `gina@${org.domain}`;
    const xml = await signedResponse({
      spEntityId: org.spEntityId,
      acsUrl: org.acsUrl,
      nameId: email,
      inResponseTo: "_never-sent",
    });
    const body = new URLSearchParams({ SAMLResponse: toBase64(xml) }).toString();
    const first = await post(org, body);
    expect(first.response.status).toBe(400);
    expect(((await first.response.json()) as { error: string }).error).toBe("invalid-state");
    const again = await post(org, body);
    expect(await again.response.json()).toMatchObject({ message: expect.stringMatching(/replay/) });
  });
});

/** Where a call of the trace ran, `[start, end]`, by a piece of its label (a call's label is its SQL's start). */
const spanIn = (trace: string, needle: string) =>
  (/\[(\d+)-(\d+)\]/.exec(trace.split("\n").find((call) => call.includes(needle)) ?? "") ?? [])
    .slice(1)
    .map(Number);
/** Two calls overlap when each starts before the other ends. */
const overlap = (a: number[], b: number[]) =>
  a.length === 2 && b.length === 2 && a[0]! < b[1]! && b[0]! < a[1]!;

const TAKE = 'delete from "sso_requests"';
const CONNECTION = 'select "id", "org_id", "type", "settings"';
const USER_ROW = 'select "id", "created_at", "updated_at", "last_seen"';

/** A sign-in answered and posted through `through`: the GET's URL and the browser's cookie. */
async function bounced(through: TestService, org: SamlOrg, email: string) {
  const signIn = await answered(org, email, through);
  const posted = await through.request("POST", org.acsUrl, {
    body: signIn.body,
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  return { back: location(posted).toString(), cookie: signIn.cookie };
}

/** A returning member's GET, measured by `measured`, after a first sign-in (the user made just in time). */
async function returningGet(
  through: TestService,
  measured: ReturnType<typeof waveService>,
  org: SamlOrg,
  email: string,
) {
  // The first GET through the measured Worker too: its key set is then cached (read again every 10 s at most).
  const first = await bounced(through, org, email);
  const made = await measured.request("GET", first.back, { headers: { cookie: first.cookie } });
  expect(location(made.response).searchParams.get("refreshToken")).toBeTruthy();
  const again = await bounced(through, org, email);
  const { response, waves: count } = await measured.request("GET", again.back, {
    headers: { cookie: again.cookie },
  });
  const landed = location(response);
  expect(landed.searchParams.get("refreshToken"), landed.href).toBeTruthy();
  return { landed, count };
}

describe("the SAML ACS's GET: three trips in line (one shard), the directory's read more with two", () => {
  it("one shard: take ∥ connection; the user's row ∥ the domains ∥ the membership ∥ the factors ∥ the device; the session ∥ the membership's write", async () => {
    // Threat (of speed): the GET's reads back in line (seven trips before issue 48's second pass: the domain check,
    // the user, the membership written then read back, the factors, each a cross-region trip to the primary).
    // Threat (of safety), pinned in ./saml-acs-get.test.ts: any of these reads started early letting a refusal write.
    const org = await samlOrg();
    const { landed, count } = await returningGet(svcOne, wavesOne, org, `june@${org.domain}`);
    const span = (needle: string) => spanIn(count.trace, needle);
    expect(overlap(span(TAKE), span(CONNECTION)), count.trace).toBe(true);
    // The take answered the user's id (one shard): everything keyed by the user reads beside the domain check.
    for (const beside of ['from "org_domains"', 'from "org_members"', '"mfa_factors"', '"user_devices"']) {
      expect(overlap(span(USER_ROW), span(beside)), `${beside}\n${count.trace}`).toBe(true);
    }
    // The membership's write (beside the session's batch) starts only once every read that could refuse answered.
    const write = span('insert into "org_members"');
    for (const refusing of [USER_ROW, 'from "org_domains"', 'from "org_members"']) {
      expect(write[0]! > span(refusing)[1]!, `${refusing}\n${count.trace}`).toBe(true);
    }
    expect(count.inLine, count.trace).toBe(3);
    expect(count.sequential, count.trace).toBeLessThanOrEqual(3);
    // The session is the membership's org's, with its role (the connection's default here).
    const session = await sessionFromRefresh(svcOne, landed.searchParams.get("refreshToken")!);
    const claims = decodeJwt(session.accessToken).payload["https://hasura.io/jwt/claims"];
    expect(claims).toMatchObject({ "x-hasura-org-id": org.orgId, "x-hasura-org-role": "member" });
  });

  it("two shards: the directory beside the domains, then the row ∥ the membership ∥ the factors ∥ the device, then the session", async () => {
    // Threat (of speed): with several shards the take cannot name the user (the directory is sharded by the email's
    // hash): one trip more at most, the directory's, never the reads after it one by one.
    const org = await samlOrg();
    const { count } = await returningGet(svc, waves, org, `ivy@${org.domain}`);
    const span = (needle: string) => spanIn(count.trace, needle);
    expect(overlap(span(TAKE), span(CONNECTION)), count.trace).toBe(true);
    expect(overlap(span('from "org_domains"'), span('from "directory"')), count.trace).toBe(true);
    for (const beside of ['from "org_members"', '"mfa_factors"', '"user_devices"']) {
      expect(overlap(span(USER_ROW), span(beside)), `${beside}\n${count.trace}`).toBe(true);
    }
    expect(count.inLine, count.trace).toBe(4);
  });
});

describe("the SAML ACS's batch failing", () => {
  it("answers 503 with Retry-After, spends no ID and keeps no result: the IdP's same response signs in once D1 is back", async () => {
    // Threat: the one batch half-applied (the ID spent, no result kept: the person's retry refused as a replay), or
    // a fault answered 500. A batch is one transaction: it failing leaves both as they were.
    const org = await samlOrg();
    const email = `gina@${org.domain}`;
    const signIn = await answered(org, email);
    const db = env.DB as D1Database;
    const failing = samlService({
      DB: new Proxy(db, {
        get(target, property) {
          if (property === "batch")
            return () => Promise.reject(new Error("D1_ERROR: Network connection lost."));
          const value = Reflect.get(target, property);
          return typeof value === "function" ? value.bind(target) : value;
        },
      }),
    });
    const form = { body: signIn.body, headers: { "content-type": "application/x-www-form-urlencoded" } };
    const down = await failing.request("POST", org.acsUrl, form);
    expect(down.status, await down.clone().text()).toBe(503);
    expect(down.headers.get("retry-after")).toBeTruthy();
    const back = await svc.request("POST", org.acsUrl, form);
    expect(back.status, await back.clone().text()).toBe(303);
    const landed = location(await openIn(svc, location(back), signIn.cookie));
    expect(landed.searchParams.get("refreshToken"), landed.href).toBeTruthy();
  });
});
