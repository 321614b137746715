import { describe, expect, it } from "vitest";
import { AppError } from "../../src/errors";
import type { Deps } from "../../src/http/deps";
import { getConfig } from "../../src/runtime/config";
import { samlSettingsFromMetadata } from "../../src/sso/saml";
import { IDP_CERT } from "../fixtures/saml/keys";
import { samlService } from "./saml-support/connection";
import { IDP_ENTITY_ID, IDP_SSO_URL, idpMetadataXml } from "./saml-support/idp";

// The IdP's metadata read into a connection's settings (src/sso/saml/metadata.ts): as text, or fetched under the
// outbound-URL policy (contract auth.md §1); bad or hostile metadata is a 400, never a 500.

const IDP_DER = IDP_CERT.replace(/-----[A-Z ]+-----|\s+/g, "");

/** Deps whose outbound fetch is `fetcher`, with the test service's configuration. */
function depsWith(
  fetcher: (url: string) => Response | Promise<Response>,
  overrides: Record<string, unknown> = {},
) {
  const config = getConfig(samlService(overrides).env as never);
  let fetched = 0;
  const deps = {
    config,
    outbound: (async (input: RequestInfo | URL) => {
      fetched++;
      return fetcher(String(input instanceof Request ? input.url : input));
    }) as typeof fetch,
  } as unknown as Deps;
  return { deps, fetched: () => fetched };
}

const xmlAnswer = (body: string, type = "application/samlmetadata+xml") =>
  new Response(body, { headers: { "content-type": type } });

async function refusal(work: Promise<unknown>): Promise<AppError> {
  const error = await work.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).status).toBe(400);
  return error as AppError;
}

describe("metadata as text", () => {
  it("reads the entity ID, the HTTP-Redirect SSO URL and the signing certificate", async () => {
    const settings = await samlSettingsFromMetadata({} as Deps, { metadataXml: idpMetadataXml() });
    expect(settings).toEqual({ idpEntityId: IDP_ENTITY_ID, ssoUrl: IDP_SSO_URL, certificates: [IDP_DER] });
  });

  it("refuses metadata that is not usable, with a message saying why", async () => {
    const good = idpMetadataXml();
    const cases: [string, RegExp][] = [
      ["<not xml", /malformed|no root/],
      ['<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>', /DOCTYPE/],
      [`${"<a>".repeat(100)}${"</a>".repeat(100)}`, /nests deeper/],
      [`<x>${"A".repeat(600 * 1024)}</x>`, /larger than/],
      [
        '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"/>',
        /exactly one identity provider/,
      ],
      [good.replace(/<ds:X509Certificate>[^<]+</g, "<ds:X509Certificate>bad!<"), /not a base64 certificate/],
      [good.replace(/HTTP-Redirect/g, "HTTP-Artifact"), /HTTP-Redirect binding/],
    ];
    for (const [metadataXml, message] of cases) {
      const error = await refusal(samlSettingsFromMetadata({} as Deps, { metadataXml }));
      expect(error.message, metadataXml.slice(0, 60)).toMatch(message);
      expect(error.code).toBe("invalid-request");
    }
    await refusal(samlSettingsFromMetadata({} as Deps, {}));
  });
});

describe("metadata from a URL", () => {
  it("fetches it from a loopback URL while local fetches are allowed", async () => {
    const { deps } = depsWith(() => xmlAnswer(idpMetadataXml()), { AUTH_OUTBOUND_ALLOW_LOCAL: "true" });
    const metadataUrl = "http://127.0.0.1:9/idp/metadata";
    const settings = await samlSettingsFromMetadata(deps, { metadataUrl });
    expect(settings).toMatchObject({ idpEntityId: IDP_ENTITY_ID, metadataUrl });
  });

  // SSRF: an org owner naming an internal address as its "metadata URL".
  it("refuses URLs the outbound policy refuses, before any fetch", async () => {
    const { deps, fetched } = depsWith(() => xmlAnswer(idpMetadataXml()));
    for (const metadataUrl of [
      "http://idp.example.com/metadata",
      "https://10.0.0.1/m",
      "https://metadata.internal/m",
    ]) {
      const error = await refusal(samlSettingsFromMetadata(deps, { metadataUrl }));
      expect(error.message).toMatch(/not one this service fetches/);
    }
    expect(fetched()).toBe(0);
  });

  // One answer whatever went wrong: the cause would tell the caller which hosts and ports answer behind the service.
  it("answers one generic refusal for a 404, a redirect, a wrong media type or a body too large", async () => {
    const answers = [
      () => new Response("no", { status: 404 }),
      () => new Response(null, { status: 302, headers: { location: "http://127.0.0.1/" } }),
      () => xmlAnswer(idpMetadataXml(), "text/html"),
      () => xmlAnswer(`<x>${"A".repeat(600 * 1024)}</x>`),
    ];
    const messages = new Set<string>();
    for (const answer of answers) {
      const { deps } = depsWith(answer);
      messages.add(
        (await refusal(samlSettingsFromMetadata(deps, { metadataUrl: "https://idp.example.com/m" }))).message,
      );
    }
    expect([...messages]).toEqual([expect.stringMatching(/could not be fetched/)]);
  });
});
