// The OAuth2 code exchange with the grant's family failing to start (`SessionFamilies.start`, after the code was spent
// and the grant row written): overloaded (the family never started) or reset after it started. The threat named above
// each test is what it keeps out.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { auditTypesOf, signUp } from "../helpers";
import { codeFor, exchange, newClient, oauth2Error, provider, s256, VERIFIER } from "../oauth2/support";
import { failingNamespace } from "../support/faults";
import { allInShards } from "../support/shards";
import { expectOAuth2Unavailable } from "./support";

describe("the code exchange: the grant's family cannot start", () => {
  // Threat: a grant left behind that no answer carried and no token refreshes (listed among the user's authorized
  // apps, counted against them), and a client retry that then reads as a replay: the grant "revoked" for an attack
  // that never happened, in the user's audit trail.
  it.each(["before", "after"] as const)(
    "%s the object acts: 503 temporarily_unavailable; no grant is left; the spent code starts nothing",
    async (when) => {
      const plain = provider();
      const client = await newClient(plain);
      const session = await signUp(plain);
      const pkce = { code_challenge: await s256(VERIFIER), code_challenge_method: "S256" };
      const { code } = await codeFor(plain, client, session, { scope: "openid offline_access", ...pkce });
      const { binding, fault } = failingNamespace(env.SESSION_FAMILIES, { match: /^start$/, when, times: 1 });
      const svc = provider({ SESSION_FAMILIES: binding });
      await expectOAuth2Unavailable(await exchange(svc, client, code, { code_verifier: VERIFIER }));
      expect(fault.failures).toBe(1);
      // The grant row goes after the answer (waitUntil), which the harness waits for.
      const grants = () => allInShards("SELECT id FROM oauth2_grants WHERE client_id = ?", client.clientId);
      expect(await grants()).toEqual([]);
      // The code was spent by the failed exchange (RFC 6749 §4.1.2: once): the client starts over.
      const retry = await oauth2Error(
        await exchange(svc, client, code, { code_verifier: VERIFIER }),
        400,
        "invalid_grant",
      );
      expect(retry.error_description).toBe("the code is invalid, expired or used");
      expect(await grants()).toEqual([]);
      expect(await auditTypesOf(session.user.id)).not.toContain("oauth2.grant-revoked");
      // A new authorization goes through whole.
      const fresh = await codeFor(plain, client, session, { scope: "openid offline_access", ...pkce });
      expect((await exchange(svc, client, fresh.code, { code_verifier: VERIFIER })).status).toBe(200);
      expect(await grants()).toHaveLength(1);
    },
  );
});
