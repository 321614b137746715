// Related origins (WebAuthn L3 §5.11, docs/passkeys.md): `AUTH_WEBAUTHN_RELATED_ORIGINS`, checked at start, served
// as `GET /.well-known/webauthn` at the origin root, and the ceremonies of those origins accepted for the one RP ID.
import { env } from "cloudflare:test";
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/server";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/errors";
import { getConfig } from "../../../src/runtime/config";
import { SoftwareAuthenticator } from "../../fakes/authenticator";
import { expectError, NO_VERIFICATION, SERVER, service, uniqueEmail } from "../../helpers";

const RP_ORIGIN = "http://localhost:3000";
const SHOP = "https://shop.example.co.uk";
const RELATED = `${RP_ORIGIN},${SHOP},https://example.de`;
const svc = service({
  ...NO_VERIFICATION,
  AUTH_WEBAUTHN_ENABLED: "true",
  AUTH_WEBAUTHN_RELATED_ORIGINS: RELATED,
});

async function json<T>(response: Response): Promise<T> {
  const body = await response.json();
  if (response.status !== 200)
    throw new Error(`expected 200, got ${response.status} ${JSON.stringify(body)}`);
  return body as T;
}

describe("related origins (WebAuthn L3 §5.11)", () => {
  // Threat: a list a browser only partly honours (more than five labels, §5.11.1) or that names an origin no
  // browser may use (plain http, an IP, a bare public suffix) would accept ceremonies the operator did not mean, or
  // fail for users silently: the start stops, naming the variable.
  it.each([
    ["plain http off localhost", `${RP_ORIGIN},http://shop.example.com`, "is not https"],
    ["an IP address", `${RP_ORIGIN},https://192.0.2.1`, "no registrable domain"],
    ["a bare public suffix", `${RP_ORIGIN},https://co.uk`, "no registrable domain"],
    ["a private public suffix", `${RP_ORIGIN},https://github.io`, "no registrable domain"],
    ["a path", `${RP_ORIGIN},https://example.com/app`, "is not an origin"],
    ["not a URL", `${RP_ORIGIN},example.com`, "is not an origin"],
    ["without the RP's own origin", "https://example.com", "must include every AUTH_WEBAUTHN_RP_ORIGINS"],
    [
      "six labels",
      `${RP_ORIGIN},https://a.com,https://b.com,https://c.com,https://d.com,https://e.com`,
      "6 registrable-domain labels",
    ],
  ])("refuses %s at start", (_what, value, reason) => {
    const start = () => getConfig({ ...env, AUTH_WEBAUTHN_RELATED_ORIGINS: value });
    expect(start).toThrow(ConfigError);
    expect(start).toThrow(/AUTH_WEBAUTHN_RELATED_ORIGINS/);
    expect(start).toThrow(reason);
  });

  it("counts one label per registrable domain, whatever the suffix or subdomain (§5.11.1)", () => {
    const five = [
      RP_ORIGIN,
      "https://example.com",
      "https://www.example.co.uk",
      "https://example.de",
      "https://b.com",
      "https://c.com",
      "https://d.org",
    ].join(",");
    // localhost, example, b, c, d: five labels across seven origins.
    expect(getConfig({ ...env, AUTH_WEBAUTHN_RELATED_ORIGINS: five }).webauthn.relatedOrigins).toHaveLength(
      7,
    );
  });

  it("serves /.well-known/webauthn at the origin root, and 404 without related origins", async () => {
    const answer = await svc.get(`${SERVER}/.well-known/webauthn`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toMatch(/application\/json/);
    expect(await answer.json()).toEqual({ origins: RELATED.split(",") });
    await expectError(await service().get(`${SERVER}/.well-known/webauthn`), 404, "route-not-found");
  });

  // Threat: a ceremony from an origin outside the list is a phishing page's; one from a listed origin is the brand's.
  it("accepts a sign-up and a sign-in from a related origin for the one RP ID, and refuses an unlisted one", async () => {
    const shop = new SoftwareAuthenticator(SHOP, "localhost");
    const options = await json<PublicKeyCredentialCreationOptionsJSON>(
      await svc.post("/signup/webauthn", { email: uniqueEmail("related") }),
    );
    expect(options.rp.id).toBe("localhost");
    await json(await svc.post("/signup/webauthn/verify", { credential: await shop.create(options) }));
    const request = await json<PublicKeyCredentialRequestOptionsJSON>(await svc.post("/signin/webauthn", {}));
    const signedIn = await json<{ session: unknown }>(
      await svc.post("/signin/webauthn/verify", { credential: await shop.get(request) }),
    );
    expect(signedIn.session).toBeTruthy();

    const again = await json<PublicKeyCredentialRequestOptionsJSON>(await svc.post("/signin/webauthn", {}));
    const phishing = await shop.get(again, { origin: "https://shop.example.net" });
    await expectError(
      await svc.post("/signin/webauthn/verify", { credential: phishing }),
      400,
      "invalid-request",
    );
  });
});
