// The WebAuthn operations driven by the real @nhost/nhost-js client against `wrangler dev`, with the tests' software
// authenticator standing in for the browser (the Chromium test covers the browser itself).
import { decodeJwt } from "jose";
import { describe, expect, inject, it } from "vitest";
import { SoftwareAuthenticator } from "../fakes/authenticator";
import { client, followLink, mailedLink, REDIRECT, rejection, uniqueEmail } from "./client";

// The compatibility server accepts ceremonies from the browser test's page origin (test/compat/wrangler-dev.ts).
const device = () => new SoftwareAuthenticator(`http://localhost:${inject("pagePort")}`, "localhost");
const ELEVATED = "x-hasura-auth-elevated";

describe("@nhost/nhost-js WebAuthn", () => {
  it("signs up with a key, signs in with it, elevates, and adds a second key", async () => {
    const nhost = client();
    const key = device();
    const email = uniqueEmail("wa-compat");
    const creation = await nhost.auth.signUpWebauthn({ email, options: { redirectTo: REDIRECT } });
    const signedUp = await nhost.auth.verifySignUpWebauthn({
      credential: await key.create(creation.body, { alg: "RS256", attestation: "packed" }),
      nickname: "first",
    });
    expect(signedUp.body.session).toBeNull();
    await followLink(await mailedLink(email));

    const request = await nhost.auth.signInWebauthn({ email });
    const signedIn = await nhost.auth.verifySignInWebauthn({ credential: await key.get(request.body) });
    expect(signedIn.body.session?.user?.email).toBe(email);
    expect(nhost.getUserSession()?.user?.email).toBe(email);

    // The client POSTs these with no body and no Content-Type (client.md §9).
    const elevation = await nhost.auth.elevateWebauthn();
    const elevated = await nhost.auth.verifyElevateWebauthn({ credential: await key.get(elevation.body) });
    const claims = decodeJwt(elevated.body.session!.accessToken)["https://hasura.io/jwt/claims"] as Record<
      string,
      unknown
    >;
    expect(claims[ELEVATED]).toBe(signedIn.body.session?.user?.id);

    const addition = await nhost.auth.addSecurityKey();
    expect(addition.body.excludeCredentials).toHaveLength(1);
    const added = await nhost.auth.verifyAddSecurityKey({
      credential: await device().create(addition.body),
      nickname: "second",
    });
    expect(added.body).toMatchObject({ nickname: "second" });
  });

  it("surfaces a replayed assertion as the contract's 400", async () => {
    const nhost = client();
    const key = device();
    const email = uniqueEmail("wa-replay");
    const creation = await nhost.auth.signUpWebauthn({ email });
    await nhost.auth.verifySignUpWebauthn({ credential: await key.create(creation.body) });
    await followLink(await mailedLink(email));
    const credential = await key.get((await nhost.auth.signInWebauthn()).body);
    await nhost.auth.verifySignInWebauthn({ credential });
    const replay = await rejection(client().auth.verifySignInWebauthn({ credential }));
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe("invalid-request");
  });
});
