import { describe, expect, it } from "vitest";
import { METADATA_MAX_BYTES, METADATA_MAX_DEPTH } from "../../src/lib/json-metadata";
import { NO_VERIFICATION, service, signUp, uniqueEmail } from "../helpers";
import { APP, FAKE_PROVIDERS } from "../providers/support";
import { STORAGE } from "../storage/helpers";
import { uniquePhone } from "../support/phones";

/**
 * Threat: a small body that costs the service its stack. Metadata nested 10,000 levels deep (60 kB) or 20,000
 * levels of arrays (40 kB) passed validation and then overflowed `JSON.stringify` or a Durable Object call: a 500.
 * Every entry point that takes free-form metadata shares one bounded schema (src/lib/json-metadata.ts).
 */

const svc = service({
  ...NO_VERIFICATION,
  AUTH_ANONYMOUS_USERS_ENABLED: "true",
  AUTH_WEBAUTHN_ENABLED: "true",
  AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
  AUTH_OTP_EMAIL_ENABLED: "true",
  AUTH_SMS_PASSWORDLESS_ENABLED: "true",
  AUTH_DEV_SMS: "true",
});

/** Metadata as JSON text: the hostile ones cannot even be built with JSON.stringify, which is the point. */
const deepObjects = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
const deepArrays = (levels: number) => `{"a":${"[".repeat(levels)}${"]".repeat(levels)}}`;
const HOSTILE: [string, string][] = [
  ["10,000 nested objects", deepObjects(10_000)],
  ["20,000 nested arrays", deepArrays(20_000)],
  [`${METADATA_MAX_DEPTH + 1} levels`, deepObjects(METADATA_MAX_DEPTH + 1)],
  ["more than the size limit", JSON.stringify({ blob: "x".repeat(METADATA_MAX_BYTES) })],
  // Text no UTF-8 writer takes: kept, it made every permission check about the user a 500 (Cedar's parser threw).
  ["a lone surrogate in a value", '{"nick":"\\ud800"}'],
  ["a lone surrogate in a key", '{"a\\udc00":1}'],
];

/** A JSON body whose `"__METADATA__"` placeholder is replaced by the metadata's text. */
const post = (path: string, template: unknown, metadata: string, token?: string) =>
  svc.request("POST", path, {
    body: JSON.stringify(template).replace('"__METADATA__"', metadata),
    headers: { "content-type": "application/json" },
    token,
  });
const M = "__METADATA__";

async function expectClear400(response: Response, context: string) {
  expect(response.status, context).toBe(400);
  const body = (await response.json()) as { error: unknown; message?: string };
  expect(JSON.stringify(body), context).toMatch(/metadata/);
}

describe("metadata is bounded at every entry point", () => {
  const phone = () => uniquePhone();
  const bodies: [string, () => unknown][] = [
    [
      "/signup/email-password",
      () => ({ email: uniqueEmail(), password: "long enough pw", options: { metadata: M } }),
    ],
    ["/signin/anonymous", () => ({ metadata: M })],
    ["/signup/webauthn", () => ({ email: uniqueEmail(), options: { metadata: M } })],
    ["/signin/passwordless/email", () => ({ email: uniqueEmail(), options: { metadata: M } })],
    ["/signup/otp/email", () => ({ email: uniqueEmail(), options: { metadata: M } })],
    ["/signin/passwordless/sms", () => ({ phoneNumber: phone(), options: { metadata: M } })],
    ["/signup/passwordless/sms", () => ({ phoneNumber: phone(), options: { metadata: M } })],
  ];

  for (const [path, body] of bodies) {
    it(`POST ${path}`, async () => {
      for (const [label, metadata] of HOSTILE)
        await expectClear400(await post(path, body(), metadata), label);
      // Within the bounds it is accepted.
      expect((await post(path, body(), deepObjects(METADATA_MAX_DEPTH))).status, "within bounds").toBe(200);
    });
  }

  it("POST /pat and /user/deanonymize", async () => {
    const session = await signUp(svc);
    const anonymous = (
      (await (await svc.post("/signin/anonymous", {})).json()) as { session: { accessToken: string } }
    ).session;
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    for (const [label, metadata] of HOSTILE) {
      await expectClear400(
        await post("/pat", { expiresAt, metadata: M }, metadata, session.accessToken),
        label,
      );
      await expectClear400(
        await post(
          "/user/deanonymize",
          { signInMethod: "passwordless", email: uniqueEmail(), options: { metadata: M } },
          metadata,
          anonymous.accessToken,
        ),
        label,
      );
    }
  });

  it("the provider sign-in URL's metadata query parameter (signInProviderURL)", async () => {
    // A browser-facing GET: the refusal goes back to redirectTo as error=invalid-request, like any other bad option.
    const providers = service({ ...FAKE_PROVIDERS });
    for (const [label, metadata] of HOSTILE) {
      for (const path of ["/signin/provider/github", "/signup/provider/github"]) {
        const query = new URLSearchParams({ redirectTo: APP, metadata });
        const response = await providers.get(`${path}?${query}`);
        // Over the query's size limit the query itself is refused (JSON 400); within it, the metadata bounds apply.
        if (response.status === 400) {
          await expectClear400(response, label);
          continue;
        }
        expect(response.status, label).toBe(302);
        const back = new URL(response.headers.get("location")!);
        expect(`${back.origin}${back.pathname}`, label).toBe(APP);
        expect(back.searchParams.get("error"), label).toBe("invalid-request");
        expect(back.searchParams.get("errorDescription"), label).toMatch(
          /^metadata: must (not|be well-formed)/,
        );
      }
    }
  });

  it("storage metadata[]", async () => {
    const session = await signUp(svc);
    for (const [label, metadata] of HOSTILE) {
      const form = new FormData();
      form.append("metadata[]", `{"metadata":${metadata}}`);
      form.append("file[]", new Blob(["x"]), "x.txt");
      const response = await svc.request("POST", `${STORAGE}/files`, {
        body: form,
        token: session.accessToken,
      });
      expect(response.status, label).toBe(400);
      expect(response.headers.get("x-error"), label).toMatch(/^metadata\[\]: must (not|be well-formed)/);
    }
  });
});
