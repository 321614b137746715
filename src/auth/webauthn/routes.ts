import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/app-env";
import { requireAuth } from "../../http/auth";
import { emailField } from "../../http/fields";
import { jsonBody } from "../../http/validation";
import { metadataSchema } from "../../lib/json-metadata";
import { rateLimit } from "../../rate-limits/middleware";
import { signUpOptionsSchema } from "../accounts/sign-up-options";
import {
  elevateWebauthn,
  signInWebauthn,
  verifyElevateWebauthn,
  verifySignInWebauthn,
} from "./authentication";
import { requireElevation } from "./elevation";
import { addSecurityKey, signUpWebauthn, verifyAddSecurityKey, verifySignUpWebauthn } from "./registration";

/** base64url fields of the browser's PublicKeyCredential JSON (WebAuthn §5.1, `toJSON()`). */
const b64u = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(/^[A-Za-z0-9_-]*$/, "must be base64url");
const credentialBase = {
  id: b64u(1024),
  rawId: b64u(1024),
  type: z.literal("public-key"),
  clientExtensionResults: metadataSchema.default({}),
  authenticatorAttachment: z.string().max(32).optional(),
};
const registrationCredential = z.looseObject({
  ...credentialBase,
  response: z.looseObject({
    clientDataJSON: b64u(16_384),
    attestationObject: b64u(49_152),
    transports: z.array(z.string().max(32)).max(10).optional(),
  }),
});
const authenticationCredential = z.looseObject({
  ...credentialBase,
  response: z.looseObject({
    clientDataJSON: b64u(16_384),
    authenticatorData: b64u(16_384),
    signature: b64u(2048),
    userHandle: b64u(1024).optional(),
  }),
});
const nicknameField = z.string().max(100).optional();

// zod checked the shape; the library checks everything inside.
const asRegistration = (credential: unknown) => credential as RegistrationResponseJSON;
const asAuthentication = (credential: unknown) => credential as AuthenticationResponseJSON;

/** WebAuthn sign-up, sign-in, elevation and security keys (contract §3.2, §3.4, §6). */
export const webauthnRoutes = new Hono<AppEnv>()
  .post(
    "/signup/webauthn",
    rateLimit("SIGNUPS"),
    jsonBody(z.object({ email: emailField, options: signUpOptionsSchema.optional() })),
    async (c) => c.json(await signUpWebauthn(c.var.deps, c.req.valid("json"))),
  )
  .post(
    "/signup/webauthn/verify",
    rateLimit("SIGNUPS"),
    jsonBody(
      z.object({
        credential: registrationCredential,
        options: signUpOptionsSchema.optional(),
        nickname: nicknameField,
      }),
    ),
    async (c) => {
      const { credential, options, nickname } = c.req.valid("json");
      const input = { credential: asRegistration(credential), options, nickname };
      return c.json(await verifySignUpWebauthn(c.var.deps, input, c.req.header("user-agent")));
    },
  )
  .post(
    "/signin/webauthn",
    rateLimit("BRUTE_FORCE"),
    jsonBody(z.object({ email: emailField.optional() })),
    async (c) => c.json(await signInWebauthn(c.var.deps, c.req.valid("json").email)),
  )
  .post(
    "/signin/webauthn/verify",
    rateLimit("BRUTE_FORCE"),
    jsonBody(z.object({ credential: authenticationCredential, email: z.string().max(254).optional() })),
    async (c) => {
      const credential = asAuthentication(c.req.valid("json").credential);
      return c.json(await verifySignInWebauthn(c.var.deps, credential, c.req.header("user-agent")));
    },
  )
  .post("/elevate/webauthn", requireAuth, async (c) =>
    c.json(await elevateWebauthn(c.var.deps, c.var.auth!.sub)),
  )
  .post(
    "/elevate/webauthn/verify",
    rateLimit("BRUTE_FORCE"),
    requireAuth,
    jsonBody(z.object({ credential: authenticationCredential })),
    async (c) => {
      const credential = asAuthentication(c.req.valid("json").credential);
      const answer = await verifyElevateWebauthn(
        c.var.deps,
        c.var.auth!.sub,
        credential,
        c.req.header("user-agent"),
      );
      return c.json(answer);
    },
  )
  .post("/user/webauthn/add", requireAuth, requireElevation({ firstKeyAllowed: true }), async (c) =>
    c.json(await addSecurityKey(c.var.deps, c.var.auth!.sub)),
  )
  .post(
    "/user/webauthn/verify",
    requireAuth,
    requireElevation({ firstKeyAllowed: true }),
    jsonBody(z.object({ credential: registrationCredential, nickname: nicknameField })),
    async (c) => {
      const { credential, nickname } = c.req.valid("json");
      const input = { credential: asRegistration(credential), nickname };
      return c.json(await verifyAddSecurityKey(c.var.deps, c.var.auth!.sub, input));
    },
  );
