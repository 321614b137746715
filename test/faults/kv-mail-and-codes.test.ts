// KV under the OAuth2 authorization request, D1 under the code exchange, the mail transport under magic links.
// Threat: a 500 where the contract promises 503 with Retry-After; an authorization code spent twice; a sign-in link
// mailed for a state the service never kept, or a mail "sent" that was not.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { mailbox, service, signUp, uniqueEmail } from "../helpers";
import {
  authorize,
  codeFor,
  exchange,
  newClient,
  oauth2Error,
  provider,
  requestIdOf,
  s256,
  VERIFIER,
} from "../oauth2/support";
import { failingEmail, failingKv, failingShards } from "../support/faults";
import { expectOAuth2Unavailable, expectUnavailable } from "./support";

describe("OAuth2: KV failing under the pending authorization request", () => {
  it("authorize with KV refusing the put: 503 with Retry-After; the retry hands the request to the login UI", async () => {
    const client = await newClient(provider());
    const { binding } = failingKv(env.OAUTH2_REQUESTS, { match: /^put$/, times: 1 });
    const svc = provider({ OAUTH2_REQUESTS: binding });
    await expectUnavailable(await authorize(svc, client));
    expect(await requestIdOf(await authorize(svc, client))).toBeTruthy();
  });

  it("the login step with KV failing to read: 503; the retry completes the request", async () => {
    const plain = provider();
    const client = await newClient(plain);
    const session = await signUp(plain);
    const requestId = await requestIdOf(await authorize(plain, client));
    const { binding } = failingKv(env.OAUTH2_REQUESTS, { match: /^get$/, times: 1 });
    const svc = provider({ OAUTH2_REQUESTS: binding });
    await expectUnavailable(await svc.post("/oauth2/login", { requestId }, session.accessToken));
    expect((await svc.post("/oauth2/login", { requestId }, session.accessToken)).status).toBe(200);
  });
});

describe("OAuth2: D1 failing under the code exchange", () => {
  it("the code's statement fails: 503 temporarily_unavailable with Retry-After; the retry exchanges it, once", async () => {
    const plain = provider();
    const client = await newClient(plain);
    const session = await signUp(plain);
    const pkce = { code_challenge: await s256(VERIFIER), code_challenge_method: "S256" };
    const { code } = await codeFor(plain, client, session, pkce);
    // The code is in its user's shard.
    const { bindings } = failingShards(env, { match: /oauth2_codes/, times: 1 });
    const svc = provider(bindings);
    await expectOAuth2Unavailable(await exchange(svc, client, code, { code_verifier: VERIFIER }));
    expect((await exchange(svc, client, code, { code_verifier: VERIFIER })).status).toBe(200);
    // Single use holds across the fault: a third try is refused.
    await oauth2Error(await exchange(svc, client, code, { code_verifier: VERIFIER }), 400, "invalid_grant");
  });
});

describe("magic link: the mail transport failing", () => {
  const viaEmail = (binding: SendEmail) =>
    service({
      AUTH_DEV_MAILBOX: "false",
      AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
      EMAIL: binding,
      AUTH_SMTP_SENDER: "noreply@example.com",
    });

  it("the transport fails for now: 503 with Retry-After, no silent success; the retry sends the link", async () => {
    const { binding, fault } = failingEmail(env.CF_EMAIL, { times: 1 });
    const svc = viaEmail(binding);
    const email = uniqueEmail("magic");
    await expectUnavailable(await svc.post("/signin/passwordless/email", { email }));
    expect(fault.failures).toBe(1);
    expect((await svc.post("/signin/passwordless/email", { email })).status).toBe(200);
    expect(fault.calls).toBe(2);
    // Nothing went to the development mailbox either: the binding is the transport.
    expect(await mailbox(service(), email)).toEqual([]);
  });
});
