import { describe, expect, it } from "vitest";
import { expectContractError, NO_VERIFICATION, service, signUp } from "../helpers";

/**
 * Throws malformed and hostile input at every endpoint. Nothing may answer 5xx; every error is the contract's
 * body `{status, message, error}` with `Cache-Control: no-store`.
 */

const svc = service(NO_VERIFICATION);

const POST_ENDPOINTS = [
  "/signup/email-password",
  "/signin/email-password",
  "/token",
  "/signout",
  "/token/verify",
];
const REQUIRES_FIELDS = new Set(["/signup/email-password", "/signin/email-password", "/token"]);

const huge = "x".repeat(20_000);
const BODIES: [string, string][] = [
  ["malformed JSON", '{"email": '],
  ["a JSON array", "[]"],
  ["a JSON string", '"hello"'],
  ["a JSON number", "42"],
  ["null", "null"],
  [
    "wrong types",
    JSON.stringify({ email: 42, password: ["a"], refreshToken: {}, all: "yes", token: 7, options: [] }),
  ],
  [
    "huge strings",
    JSON.stringify({ email: `${huge}@example.com`, password: huge, refreshToken: huge, token: huge }),
  ],
  ["missing fields", JSON.stringify({ unrelated: true })],
  ["deep nesting", `${"[".repeat(5000)}${"]".repeat(5000)}`],
  ["deeper nesting, to the size limit", `${"[".repeat(30_000)}${"]".repeat(30_000)}`],
  // Text no UTF-8 writer takes (src/lib/well-formed.ts): refused in every field, whatever the endpoint reads.
  ["a lone surrogate", '{"email":"a@example.com","password":"pass\\ud800word","refreshToken":"\\udc00"}'],
  ["prototype keys", '{"__proto__": {"admin": true}, "constructor": {"prototype": {}}}'],
  [
    "bad email and options",
    JSON.stringify({ email: "not-an-email", password: "p", options: { metadata: "x", locale: 5 } }),
  ],
];

describe("bad input never causes a 5xx", () => {
  for (const path of POST_ENDPOINTS) {
    for (const [label, body] of BODIES) {
      it(`POST ${path} with ${label}`, async () => {
        const response = await svc.request("POST", path, {
          body,
          headers: { "content-type": "application/json" },
        });
        if (label === "a lone surrogate") {
          expect(response.status, path).toBe(400);
          const { message } = (await response.clone().json()) as { message: string };
          expect(message).toMatch(/^(password|refreshToken): text that is not well-formed Unicode/);
        }
        if (REQUIRES_FIELDS.has(path) || label === "malformed JSON" || response.status >= 400) {
          await expectContractError(response, `${path} ${label}`);
        } else {
          expect(response.status).toBe(200);
          expect(await response.json()).toBe("OK");
        }
      });
    }

    it(`POST ${path} with a body over the size limit answers 413`, async () => {
      const response = await svc.request("POST", path, {
        body: JSON.stringify({ padding: "x".repeat(70 * 1024) }),
        headers: { "content-type": "application/json" },
      });
      expect(response.status).toBe(413);
      await expectContractError(response, path);
    });

    it(`POST ${path} with a form body and a stale bearer`, async () => {
      const response = await svc.request("POST", path, {
        body: "email=a%40b.c&password=x",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: "Bearer expired.jwt.token",
        },
      });
      // A form body is not a JSON body, whatever the endpoint (curl -d without a JSON Content-Type).
      const { message } = (await response.clone().json()) as { message: string };
      await expectContractError(response, path);
      if (path !== "/token/verify") expect(message).toContain("expected a JSON body");
    });
  }

  it("an empty body with a JSON Content-Type counts as {}", async () => {
    const response = await svc.request("POST", "/signin/email-password", {
      headers: { "content-type": "application/json" },
    });
    await expectContractError(response, "empty body");
    expect((await svc.post("/signin/email-password")).status).toBe(400);
  });

  it("GET /user with hostile Authorization headers", async () => {
    for (const value of [
      "Bearer",
      "Bearer ",
      "Basic abc",
      `Bearer ${"a".repeat(10_000)}`,
      "Bearer a.b",
      "Bearer ....",
    ]) {
      await expectContractError(
        await svc.request("GET", "/user", { headers: { authorization: value } }),
        value.slice(0, 20),
      );
    }
  });

  it("GET /verify with missing and hostile query parameters redirects, never errors", async () => {
    for (const query of [
      "",
      "?ticket=",
      "?redirectTo=javascript:alert(1)",
      `?ticket=${"a".repeat(5000)}&redirectTo=http://localhost:3000`,
    ]) {
      const response = await svc.request("GET", `/verify${query}`);
      expect(response.status, query).toBe(302);
      expect(new URL(response.headers.get("location")!).searchParams.get("error"), query).toBeTruthy();
    }
  });

  it("GET /dev/mailbox without or with a huge address", async () => {
    await expectContractError(await svc.get("/dev/mailbox"), "no to");
    await expectContractError(await svc.get(`/dev/mailbox?to=${"a".repeat(1000)}`), "huge to");
  });

  it("wrong methods on known paths answer 404 in the contract shape", async () => {
    await expectContractError(await svc.request("DELETE", "/user"), "DELETE /user");
    await expectContractError(await svc.request("GET", "/token"), "GET /token");
  });

  it("the hardening issue's new endpoints take hostile input with a 4xx", async () => {
    const session = await signUp(svc);
    const sms = service({ ...NO_VERIFICATION, AUTH_SMS_PASSWORDLESS_ENABLED: "true", AUTH_DEV_SMS: "true" });
    for (const [, body] of BODIES) {
      const response = await sms.request("POST", "/signup/passwordless/sms", {
        body,
        headers: { "content-type": "application/json" },
      });
      await expectContractError(response, `/signup/passwordless/sms ${body.slice(0, 20)}`);
    }
    for (const id of ["", "x", "a".repeat(5000), "%00", "..%2F..%2Fetc"]) {
      const response = await svc.request("DELETE", `/user/security-keys/${id}`, {
        token: session.accessToken,
      });
      await expectContractError(response, `DELETE /user/security-keys/${id.slice(0, 20)}`);
    }
    for (const header of ["Bearer x", "Basic abc", ""]) {
      await expectContractError(
        await svc.request("GET", "/user/security-keys", { headers: { authorization: header } }),
        `GET /user/security-keys ${header}`,
      );
    }
  });

  it("a valid session still works after all of that", async () => {
    const session = await signUp(svc);
    expect((await svc.get("/user", session.accessToken)).status).toBe(200);
  });
});
