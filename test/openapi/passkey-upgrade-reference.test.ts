// The API reference of the passkey upgrade (issue 47, docs/passkeys.md): the served document shows `upgrade` on
// `POST /user/webauthn/add` with its rules, and the refusals of both calls in the contract's error shape; the admin
// API's passkey operations are in it too. Threat: an app developer reading a reference that omits the window, the
// once-per-session rule or the `phr` limit, and building on an upgrade's key as if it were a gestured passkey.
import { describe, expect, it } from "vitest";
import type { OpenApiDocument } from "../../src/openapi/document";
import { service } from "../helpers";

const svc = service({ AUTH_WEBAUTHN_ENABLED: "true" });

describe("the passkey upgrade in the API reference", () => {
  it("documents the flag's rules and the error answers of add and verify", async () => {
    const doc = (await (await svc.get("/openapi.json")).json()) as OpenApiDocument;
    const add = doc.paths["/user/webauthn/add"]!.post!;
    const body = add.requestBody!.content["application/json"]!.schema as {
      properties: { upgrade: { type: string; description: string } };
    };
    expect(body.properties.upgrade.type).toBe("boolean");
    for (const rule of [
      "once per session",
      "within 5 minutes",
      "user presence 0",
      "mailed",
      "phishing-resistant (`phr`) until it is used with user verification",
    ]) {
      expect(body.properties.upgrade.description).toContain(rule);
    }
    expect(add.description).toContain('`mediation: "conditional"`');
    expect(add.description).toContain("403 `forbidden`");
    const errorOf = (answer: unknown) =>
      (answer as { content: Record<string, { schema: { properties: { error: { enum: string[] } } } }> })
        .content["application/json"]!.schema.properties.error.enum;
    expect(errorOf(add.responses["403"])).toEqual(["forbidden"]);
    expect(errorOf(add.responses["400"])).toEqual(["invalid-request"]);
    const verify = doc.paths["/user/webauthn/verify"]!.post!;
    expect(errorOf(verify.responses["403"])).toEqual(["forbidden"]);
    expect(verify.responses["400"]!.description).toContain("user presence 0 outside an upgrade");
    // The operator's side (the console's passkeys section calls the same service).
    expect(doc.paths["/admin/users/{id}/security-keys"]?.get).toBeDefined();
    expect(doc.paths["/admin/users/{id}/security-keys/{keyId}"]?.delete?.responses["204"]).toBeDefined();
  });
});
