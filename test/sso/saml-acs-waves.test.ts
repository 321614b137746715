import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { NO_VERIFICATION } from "../helpers";
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
// at most once.

const overrides = {
  ...NO_VERIFICATION,
  AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS: "https://app.example.com",
};
const svc = samlService();
const waves = waveService(overrides);

/** A sign-in started in a fresh browser and the IdP's signed answer to it, as the ACS's form body. */
async function answered(org: SamlOrg, email: string) {
  const started = await startSignIn(svc, email);
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

describe("the SAML ACS's GET: the take and the connection side by side", () => {
  it("reads the connection beside the result's take; the sign-in lands with a refresh token", async () => {
    // Threat (of speed): the connection read put back behind the take, one more cross-region trip. The GET's budget
    // is 3 (docs/performance.md, "SAML ACS"); what it still runs in line (the domain check, the user, the membership
    // written then read, the factors) is counted by `npm run bench:latency`, and this pins what it is now.
    const org = await samlOrg();
    const email = `ivy@${org.domain}`;
    const signIn = await answered(org, email);
    const bounce = location((await post(org, signIn.body)).response);
    // The user made (just in time) by a first sign-in: the second is the one every later sign-in is.
    expect(location(await openIn(svc, bounce, signIn.cookie)).searchParams.get("refreshToken")).toBeTruthy();
    const again = await answered(org, email);
    const back = location((await post(org, again.body)).response);
    const { response, waves: count } = await waves.request("GET", back.toString(), {
      headers: { cookie: again.cookie },
    });
    expect(
      location(response).searchParams.get("refreshToken"),
      response.headers.get("location")!,
    ).toBeTruthy();
    const lines = count.trace.split("\n");
    const take = lines.find((line) => /d1-primary delete from "sso_requests"/.test(line));
    const connection = lines.find((line) =>
      /d1-primary select "id", "org_id", "type", "settings"/.test(line),
    );
    const [a, b] = [take, connection].map((line) =>
      line
        ?.match(/^\[(\d+)-(\d+)\]/)
        ?.slice(1)
        .map(Number),
    );
    // Two calls overlap when each starts before the other ends.
    expect(a && b && a[0]! < b[1]! && b[0]! < a[1]!, count.trace).toBe(true);
    // 7 in the bench (one shard, the key set cached); here two shards add the directory's read before the user's,
    // and the isolate may read its key set (every 10 s).
    expect(count.sequential, count.trace).toBeLessThanOrEqual(9);
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
