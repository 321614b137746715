// The JTI ledger (`JtiLedger`, src/replay/jti-ledger.ts) failing: the objects that remember which DPoP proofs and client
// assertions were used. The threat named above each test is what it keeps out.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { proof, proofKey, TOKEN_ENDPOINT } from "../oauth2/dpop-support";
import { basic, newClient, postForm, provider } from "../oauth2/support";
import { failingNamespace } from "../support/faults";
import { expectOAuth2Unavailable } from "./support";

describe("the JTI ledger cannot record a proof", () => {
  // Threat: a proof accepted without being recorded, which could then be replayed as often as anyone likes (a token
  // for every copy). The request is refused with 503 and issues nothing; the client's retry with a new proof works.
  it.each(["before", "after"] as const)(
    "%s the object acts: 503 temporarily_unavailable, no token; a new proof then gets one",
    async (when) => {
      const plain = provider();
      const client = await newClient(plain, {
        grantTypes: ["client_credentials"],
        redirectUris: [],
        scopes: [],
      });
      const { binding, fault } = failingNamespace(env.JTI_LEDGERS, { match: /^claim$/, when, times: 1 });
      const svc = provider({ JTI_LEDGERS: binding });
      const key = await proofKey();
      const token = async () =>
        postForm(
          svc,
          "/oauth2/token",
          { grant_type: "client_credentials" },
          { ...basic(client), DPoP: await proof(key, "POST", TOKEN_ENDPOINT) },
        );
      await expectOAuth2Unavailable(await token());
      expect(fault.failures).toBe(1);
      const retry = await token();
      expect(retry.status).toBe(200);
      expect(((await retry.json()) as { token_type: string }).token_type).toBe("DPoP");
    },
  );
});
