// The client's name is the one thing on the consent screen the client chose itself. Threat (issue 28): control and
// invisible formatting characters in it (Unicode Cc, Cf, and the line and paragraph separators) reorder or hide what
// the person reads: a right-to-left override turns "Acme <U+202E>gnp.exe" into "Acme exe.png", zero-width characters make
// a look-alike of a trusted name, a line break fakes a second line. One rule (the client schema) refuses them at
// every entry: the admin API (400 invalid-request), registration (invalid_client_metadata, registration.test.ts)
// and client metadata documents (invalid_client).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { expectError } from "../../helpers";
import { newClient, oauth2Error, provider, s256, VERIFIER } from "../support";

const svc = provider({ AUTH_OAUTH2_PROVIDER_REGISTRATION: "open" });
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };

const HIDDEN = [
  "Acme \u202Egnp.exe", // right-to-left override
  "\u2066Acme\u2069", // left-to-right isolate
  "Pay\u200Bpal", // zero-width space
  "Acme\u200DBank", // zero-width joiner
  "Acme\u2028Bank", // line separator
  "Acme\u2029Bank", // paragraph separator
  "\uFEFFAcme", // byte-order mark
  "Acme\nAllow everything", // a control character
  "Acme\u0007", // bell
  "Acme\u00ADBank", // soft hyphen (Cf)
];

describe("client names hold no control or invisible formatting characters", () => {
  it("the admin API refuses them, on create and on replace; ordinary names in any script stay fine", async () => {
    for (const clientName of HIDDEN) {
      const created = await svc.request("POST", "/admin/oauth2/clients", {
        headers: ADMIN,
        json: { clientName, redirectUris: ["https://rp.example.com/cb"] },
      });
      await expectError(created, 400, "invalid-request");
    }
    const client = await newClient(svc, { clientName: "Zürich Notes — 東京 ✓ עברית" });
    expect(client.clientName).toBe("Zürich Notes — 東京 ✓ עברית");
    const replaced = await svc.request("PUT", `/admin/oauth2/clients/${client.clientId}`, {
      headers: ADMIN,
      json: { clientName: "Acme \u202Egnp.exe", redirectUris: ["https://rp.example.com/cb"] },
    });
    await expectError(replaced, 400, "invalid-request");
  });

  it("a client metadata document naming itself with them is refused", async () => {
    for (const clientName of HIDDEN.slice(0, 3)) {
      const path = `/mcp/${crypto.randomUUID()}.json`;
      const url = `https://client-docs.fake${path}`;
      await env.OUTBOUND!.fetch(`https://client-docs.fake/__doc?path=${encodeURIComponent(path)}`, {
        method: "PUT",
        body: JSON.stringify({
          client_id: url,
          client_name: clientName,
          redirect_uris: ["http://127.0.0.1/callback"],
          token_endpoint_auth_method: "none",
        }),
      });
      const response = await svc.request(
        "GET",
        `/oauth2/authorize?${new URLSearchParams({
          client_id: url,
          redirect_uri: "http://127.0.0.1:5000/callback",
          response_type: "code",
          code_challenge: await s256(VERIFIER),
          code_challenge_method: "S256",
        })}`,
      );
      const body = await oauth2Error(response, 401, "invalid_client");
      expect(body.error_description).toContain("client_name");
    }
  });
});
