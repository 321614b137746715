// D1 failing under the account hot paths: sign-up, sign-in, the session check and the key set. Threat: a database
// fault turning into a 500 with a stack, an account or a session half made (a user the retry meets as
// `email-already-in-use`, a session row no token refreshes), or a retry that cannot succeed once D1 is back.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { NO_VERIFICATION, PASSWORD, service, signUp, uniqueEmail } from "../helpers";
import { failingD1, failingShards } from "../support/faults";
import { accountOf, expectUnavailable } from "./support";

/**
 * The statements (and batches) a flow runs, in order, learnt by watching one that succeeds. Every shard is watched
 * (and failed) as one: a user's rows are in its shard, the directory and the global tables in `DB`.
 */
async function stepsOf(
  flow: (svc: ReturnType<typeof service>) => Promise<unknown>,
  vars: Record<string, string> = {},
): Promise<string[]> {
  const { bindings, fault } = failingShards(env, { after: Number.POSITIVE_INFINITY });
  await flow(service({ ...NO_VERIFICATION, ...vars, ...bindings }));
  return fault.seen;
}

describe("sign-up with D1 failing at each of its statements", () => {
  it("each step: a 503 (or a 200 when the step ran after the answer); never a user half made; the retry succeeds", async () => {
    const steps = await stepsOf((svc) => signUp(svc));
    expect(steps.length).toBeGreaterThan(2);
    for (let step = 0; step < steps.length; step++) {
      const context = `step ${step}: ${steps[step]!.slice(0, 80)}`;
      const { bindings } = failingShards(env, { after: step, times: 1 });
      const svc = service({ ...NO_VERIFICATION, ...bindings });
      const email = uniqueEmail("d1-signup");
      const answer = await svc.post("/signup/email-password", { email, password: PASSWORD });
      const after = await accountOf(email);
      if (answer.status === 200) {
        // The step was after the answer (an audit row, the outbox's drain): the account is whole.
        expect(after.user, context).not.toBeNull();
        expect(after.sessions, context).toBe(1);
        continue;
      }
      await expectUnavailable(answer, context);
      // No account without its session: the sign-up undid it, so the retry is the same request.
      expect(after, context).toEqual({ user: null, sessions: 0 });
      const again = await svc.post("/signup/email-password", { email, password: PASSWORD });
      expect(again.status, context).toBe(200);
      const whole = await accountOf(email);
      expect(JSON.parse(whole.user!.roles), context).toContain(whole.user!.default_role);
      expect(whole.sessions, context).toBe(1);
    }
  });
});

describe("sign-in with D1 failing at each of its statements", () => {
  // One database: the account's factors and devices are read on a session at the row's bookmark (a step of its own).
  it.each([
    ["two shards", {}],
    ["one database", { AUTH_D1_SHARDS: "DB" }],
  ])(
    "%s, each step: a 503 and no session, or a 200 with one whole session; the retry signs in",
    async (_, vars) => {
      const email = uniqueEmail("d1-signin");
      await signUp(service({ ...NO_VERIFICATION, ...vars }), email);
      const signIn = (svc: ReturnType<typeof service>) =>
        svc.post("/signin/email-password", { email, password: PASSWORD });
      const steps = await stepsOf(signIn, vars);
      if ("AUTH_D1_SHARDS" in vars) expect(steps.some((step) => step.includes('"mfa_factors"'))).toBe(true);
      let sessions = (await accountOf(email)).sessions;
      for (let step = 0; step < steps.length; step++) {
        const context = `step ${step}: ${steps[step]!.slice(0, 80)}`;
        const svc = service({
          ...NO_VERIFICATION,
          ...vars,
          ...failingShards(env, { after: step, times: 1 }).bindings,
        });
        const answer = await signIn(svc);
        if (answer.status !== 200) {
          await expectUnavailable(answer, context);
          // No session row the client never received a token for.
          expect((await accountOf(email)).sessions, context).toBe(sessions);
        } else {
          sessions += 1;
        }
        expect((await signIn(svc)).status, context).toBe(200);
        sessions += 1;
        expect((await accountOf(email)).sessions, context).toBe(sessions);
      }
      // Two shards: the directory's read, the user's shard and the home database's drains are steps too.
    },
    30_000,
  );
});

describe("the session check and the key set with D1 down", () => {
  it("GET /user: 503 with Retry-After while D1 fails, the user once it is back", async () => {
    const session = await signUp(service(NO_VERIFICATION));
    const { bindings, fault } = failingShards(env, { match: /from "users"|from users/i });
    const svc = service({ ...NO_VERIFICATION, ...bindings });
    await expectUnavailable(await svc.get("/user", session.accessToken));
    fault.heal();
    expect((await svc.get("/user", session.accessToken)).status).toBe(200);
  });

  it("JWKS at a cold isolate: 503 while the stored keys cannot be read, the set once D1 is back", async () => {
    // A warm isolate keeps answering with the set it has (src/signing-keys/keys.ts); a cold one has nothing to answer with.
    const { binding, fault } = failingD1(env.DB, { match: /signing_keys/ });
    const svc = service({ DB: binding });
    await expectUnavailable(await svc.get("/.well-known/jwks.json"));
    fault.heal();
    const jwks = await svc.get("/.well-known/jwks.json");
    expect(jwks.status).toBe(200);
    expect(((await jwks.json()) as { keys: unknown[] }).keys.length).toBeGreaterThan(0);
  });

  it("a valid access token at a cold isolate whose keys cannot be read: 503, not 401; 200 once D1 is back", async () => {
    // Threat: a database blip read as "your token is invalid". nhost-js answers a 401 by refreshing and, that failing
    // too, signs its user out: every user of a fresh isolate would have been signed out by a passing D1 fault.
    const session = await signUp(service(NO_VERIFICATION));
    const { binding, fault } = failingD1(env.DB, { match: /signing_keys/ });
    const svc = service({ ...NO_VERIFICATION, DB: binding });
    await expectUnavailable(await svc.get("/user", session.accessToken));
    expect(fault.failures).toBeGreaterThan(0);
    // A token that is not one is still a 401: the key set's failure is no verdict, a forged signature is one.
    fault.heal();
    expect((await svc.get("/user", session.accessToken)).status).toBe(200);
    const forged = `${session.accessToken.slice(0, -4)}AAAA`;
    expect((await svc.get("/user", forged)).status).toBe(401);
  });
});
