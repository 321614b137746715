// What a call of `AuthService` costs in D1 and Durable Objects (contract platform.md §1, "Costs"; issue 45's
// "Speed"): an access token without `live` is a signature check with cached keys, no D1 query and no object call;
// `live` one call of the session's family object and still no D1 query; a personal access token one D1 read; a DPoP
// proof one call of the replay ledger. Counted by wrapping the bindings the entrypoint is given, as the refresh's
// costs are (test/auth/sessions/refresh-storage.test.ts): the entrypoint is constructed here over a counting `env`,
// which a real binding cannot be handed; auth-service.test.ts proves the same calls through a real binding.
import { createExecutionContext, env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import { AuthService } from "../../src/index";
import { NO_VERIFICATION, PASSWORD, SERVER, service, signUp, type WireSession } from "../helpers";
import { countingRoundTrips, type RoundTrips } from "../support/counting-bindings";
import { dpopKey } from "./support";

const svc = service(NO_VERIFICATION);
const trips: RoundTrips = { d1: [], objects: {} };
/** One counting env for every call: the service's per-env caches (its config, its keys) warm once. */
const counted = { ...env, ...countingRoundTrips(trips) } as unknown as Env;
const API = "https://api.example.com/things";

let session: WireSession;

beforeAll(async () => {
  session = await signUp(svc);
});

/** Five calls of `call` after a first one (which may read the signing keys: then at most every ten seconds). */
async function costOfFive(call: (auth: AuthService) => Promise<unknown>): Promise<RoundTrips> {
  const auth = () => new AuthService(createExecutionContext(), counted);
  expect(await call(auth())).toBeTruthy();
  trips.d1.length = 0;
  for (const name of Object.keys(trips.objects)) delete trips.objects[name];
  for (let i = 0; i < 5; i++) expect(await call(auth())).toBeTruthy();
  return { d1: [...trips.d1], objects: { ...trips.objects } };
}

const bearer = (token: string) => new Request(API, { headers: { authorization: `Bearer ${token}` } });
const userOf = (answer: unknown) => (answer as { user?: { id: string } } | null)?.user?.id;

describe("AuthService's costs", () => {
  // Threat (to the contract's promise, not to a user): the hot path of every consumer request quietly gaining a D1
  // query, which costs every app's Worker a round trip to the one primary and its rate of reads.
  it("an access token without live: no D1 query, no object call; verifyToken the same", async () => {
    const authenticate = await costOfFive(async (auth) =>
      userOf(await auth.authenticate(bearer(session.accessToken))),
    );
    const verify = await costOfFive(async (auth) => {
      const verdict = await auth.verifyToken(session.accessToken);
      return "active" in verdict && verdict.active;
    });
    expect({ authenticate, verify }).toEqual({
      authenticate: { d1: [], objects: {} },
      verify: { d1: [], objects: {} },
    });
  });

  it("live: one call of the session's family object each, and no D1 query", async () => {
    const live = await costOfFive(async (auth) =>
      userOf(await auth.authenticate(bearer(session.accessToken), { live: true })),
    );
    expect(live).toEqual({ d1: [], objects: { SESSION_FAMILIES: 5 } });
  });

  it("a personal access token: one D1 read each; a DPoP proof: one call of the replay ledger each", async () => {
    const created = await svc.post(
      "/pat",
      { expiresAt: new Date(Date.now() + 3_600_000).toISOString() },
      session.accessToken,
    );
    expect(created.status).toBe(200);
    const { personalAccessToken } = (await created.json()) as { personalAccessToken: string };
    const pat = await costOfFive(async (auth) =>
      userOf(await auth.authenticate(bearer(personalAccessToken))),
    );
    expect(pat.d1).toHaveLength(5);
    expect(pat.objects).toEqual({});

    const key = await dpopKey();
    const signIn = await svc.request("POST", "/signin/email-password", {
      json: { email: session.user.email, password: PASSWORD },
      headers: { dpop: await key.proof("POST", `${SERVER}/auth/v1/signin/email-password`) },
    });
    expect(signIn.status).toBe(200);
    const bound = ((await signIn.json()) as { session: WireSession }).session.accessToken;
    const dpop = await costOfFive(async (auth) =>
      userOf(
        await auth.authenticate(
          new Request(API, {
            headers: { authorization: `DPoP ${bound}`, dpop: await key.proof("GET", API, bound) },
          }),
        ),
      ),
    );
    expect(dpop.d1).toEqual([]);
    expect(Object.values(dpop.objects)).toEqual([5]);
  });
});
