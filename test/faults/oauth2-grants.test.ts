// The OAuth2 code exchange with a fault after the code was taken and the grant row written: the grant's family failing
// to start (`SessionFamilies.start`: overloaded, so it never started, or reset after it started), or D1 failing at the
// signing key's read that follows the grant (a cold isolate). The threat named above each test is what it keeps out.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { auditTypesOf, signUp } from "../helpers";
import { codeFor, exchange, newClient, provider, s256, VERIFIER } from "../oauth2/support";
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
