import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/app-env";
import { requireAuth } from "../../http/auth";
import { operation } from "../../http/documented";
import { emailField } from "../../http/fields";
import { signUpChecks } from "../../http/sign-up-gate";
import { jsonBody } from "../../http/validation";
import { metadataSchema } from "../../lib/json-metadata";
import { rateLimit } from "../../rate-limits/middleware";
import { sessionPayloadSchema } from "../new-sessions";
import { signInScope } from "../sign-in";
import { signUpOptionsSchema } from "../sign-up-options";
import {
  elevateWebauthn,
  signInWebauthn,
  verifyElevateWebauthn,
  verifySignInWebauthn,
} from "./authentication";
import { requireElevation } from "./elevation";
import { addSecurityKey, signUpWebauthn, verifyAddSecurityKey, verifySignUpWebauthn } from "./registration";
import { addErrorAnswers, UPGRADE_DESCRIPTION, upgradeFlag, verifyErrorAnswers } from "./upgrade-doc";

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
export const registrationCredential = z.looseObject({
  ...credentialBase,
  response: z.looseObject({
    clientDataJSON: b64u(16_384),
    attestationObject: b64u(49_152),
    transports: z.array(z.string().max(32)).max(10).optional(),
  }),
});
export const authenticationCredential = z.looseObject({
  ...credentialBase,
  response: z.looseObject({
    clientDataJSON: b64u(16_384),
    authenticatorData: b64u(16_384),
    signature: b64u(2048),
    userHandle: b64u(1024).optional(),
  }),
});
const nicknameField = z.string().max(100).optional();

/** What the browser hands to `navigator.credentials.create` (WebAuthn §5.4, as JSON). */
const creationOptions = z.looseObject({
  challenge: z.string(),
  rp: z.looseObject({ name: z.string(), id: z.string().optional() }),
  user: z.looseObject({ id: z.string(), name: z.string(), displayName: z.string() }),
  pubKeyCredParams: z.array(z.looseObject({ type: z.string(), alg: z.number() })),
});
/** What the browser hands to `navigator.credentials.get` (WebAuthn §5.5, as JSON). */
const requestOptions = z.looseObject({
  challenge: z.string(),
  rpId: z.string().optional(),
  allowCredentials: z.array(z.looseObject({ id: z.string(), type: z.string() })).optional(),
});
const OPTIONS_NOTE =
  "Pass it to `PublicKeyCredential.parseCreationOptionsFromJSON` / `parseRequestOptionsFromJSON`; the challenge is " +
  "single use and lives five minutes. Off unless `AUTH_WEBAUTHN_ENABLED` (409 `disabled-endpoint`).";

// zod checked the shape; the library checks everything inside.
const asRegistration = (credential: unknown) => credential as RegistrationResponseJSON;
const asAuthentication = (credential: unknown) => credential as AuthenticationResponseJSON;

/** WebAuthn sign-up, sign-in, elevation and security keys (contract §3.2, §3.4, §6). */
export const webauthnRoutes = new Hono<AppEnv>()
  .post(
    "/signup/webauthn",
    operation({
      summary: "Start a sign-up with a passkey",
      description: `Creation options for a new user with this email (409 \`email-already-in-use\`). ${OPTIONS_NOTE}`,
      answers: { 200: { description: "Credential creation options.", schema: creationOptions } },
    }),
    jsonBody(z.object({ email: emailField, options: signUpOptionsSchema.optional() })),
    signUpChecks(),
    async (c) => c.json(await signUpWebauthn(c.var.deps, c.req.valid("json"))),
  )
  .post(
    "/signup/webauthn/verify",
    operation({
      summary: "Finish a sign-up with a passkey",
      description:
        "The browser's `credential.toJSON()`: creates the user and the key. A session, or none until the email is " +
        "verified. A bad attestation or an unknown or used challenge: 400 `invalid-request`.",
      answers: { 200: { description: "A session, or none yet.", schema: sessionPayloadSchema } },
    }),
    // Counted and challenged once per sign-up, at its start: the challenge it answers was only issued then.
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
      return c.json(await verifySignUpWebauthn(signInScope(c, "webauthn", { signUp: true }), input));
    },
  )
  .post(
    "/signin/webauthn",
    operation({
      summary: "Start a sign-in with a passkey",
      description: `Request options: with \`email\` for that user's keys, without for a discoverable passkey. ${OPTIONS_NOTE}`,
      answers: { 200: { description: "Credential request options.", schema: requestOptions } },
    }),
    rateLimit("BRUTE_FORCE"),
    jsonBody(z.object({ email: emailField.optional() })),
    async (c) => c.json(await signInWebauthn(c.var.deps, c.req.valid("json").email)),
  )
  .post(
    "/signin/webauthn/verify",
    operation({
      summary: "Finish a sign-in with a passkey",
      description:
        "The browser's assertion (`credential.toJSON()`); `email` is ignored. A bad assertion or an unknown or used " +
        "challenge: 400 `invalid-request`.",
      answers: { 200: { description: "A session.", schema: sessionPayloadSchema } },
    }),
    rateLimit("BRUTE_FORCE"),
    jsonBody(z.object({ credential: authenticationCredential, email: z.string().max(254).optional() })),
    async (c) => {
      const credential = asAuthentication(c.req.valid("json").credential);
      return c.json(await verifySignInWebauthn(signInScope(c, "webauthn"), credential));
    },
  )
  .post(
    "/elevate/webauthn",
    operation({
      summary: "Start an elevation",
      description: `Request options for the user's own keys, to prove presence before a sensitive change (contract §6). 400 \`invalid-request\` for a user without keys. ${OPTIONS_NOTE}`,
      security: "bearer",
      answers: { 200: { description: "Credential request options.", schema: requestOptions } },
    }),
    requireAuth,
    async (c) => c.json(await elevateWebauthn(c.var.deps, c.var.auth!.sub)),
  )
  .post(
    "/elevate/webauthn/verify",
    operation({
      summary: "Finish an elevation",
      description:
        "A session whose access token carries the elevated claim (`x-hasura-auth-elevated`), which the operations " +
        "marked elevated require of users with security keys.",
      security: "bearer",
      answers: { 200: { description: "An elevated session.", schema: sessionPayloadSchema } },
    }),
    rateLimit("BRUTE_FORCE"),
    requireAuth,
    jsonBody(z.object({ credential: authenticationCredential })),
    async (c) => {
      const credential = asAuthentication(c.req.valid("json").credential);
      // An elevation is a proof, not a sign-in: recorded with no method, as it always was.
      return c.json(await verifyElevateWebauthn(signInScope(c, null), c.var.auth!.sub, credential));
    },
  )
  .post(
    "/user/webauthn/add",
    operation({
      summary: "Start adding a security key",
      description:
        "Creation options for another key of the signed-in user (the first one needs no elevation). " +
        `${UPGRADE_DESCRIPTION} ${OPTIONS_NOTE}`,
      security: "elevated",
      answers: {
        200: { description: "Credential creation options.", schema: creationOptions },
        ...addErrorAnswers,
      },
    }),
    requireAuth,
    requireElevation({ firstKeyAllowed: true }),
    jsonBody(z.object({ upgrade: upgradeFlag })),
    async (c) => {
      const auth = c.var.auth!;
      if (!c.req.valid("json").upgrade) return c.json(await addSecurityKey(c.var.deps, auth.sub));
      return c.json(await addSecurityKey(c.var.deps, auth.sub, "required", { sessionId: auth.sid }));
    },
  )
  .post(
    "/user/webauthn/verify",
    operation({
      summary: "Finish adding a security key",
      description: "The browser's `credential.toJSON()` and an optional nickname: the key is added.",
      security: "elevated",
      answers: {
        200: {
          description: "The new key.",
          schema: z.object({ id: z.string(), nickname: z.string().optional() }),
        },
        ...verifyErrorAnswers,
      },
    }),
    requireAuth,
    requireElevation({ firstKeyAllowed: true }),
    jsonBody(z.object({ credential: registrationCredential, nickname: nicknameField })),
    async (c) => {
      const { credential, nickname } = c.req.valid("json");
      const input = { credential: asRegistration(credential), nickname };
      const auth = c.var.auth!;
      return c.json(await verifyAddSecurityKey(c.var.deps, auth.sub, input, { sessionId: auth.sid }));
    },
  );
