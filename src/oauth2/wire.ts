import { z } from "zod";
import type { AnswerDoc } from "../http/documented";
import { REFRESH_TOKEN_PREFIX, REGISTRATION_TOKEN_PREFIX } from "./token-prefixes";

/**
 * What the authorization server answers (contract §3.5, §3.6), as schemas for the OpenAPI document; the suite checks
 * every answer it gets against them.
 */

export const oauth2ErrorSchema = z
  .object({ error: z.string().describe("An RFC 6749 / 7591 / 8628 code"), error_description: z.string() })
  .meta({
    examples: [{ error: "invalid_grant", error_description: "the code is invalid, expired or used" }],
  });

/** RFC 6749's error answers, 400 and 401 (`invalid_client`, `invalid_token`, with `WWW-Authenticate`). */
export const OAUTH2_ERRORS: Record<number, AnswerDoc> = {
  400: {
    description: "An RFC 6749 error (`invalid_request`, `invalid_grant`, …).",
    schema: oauth2ErrorSchema,
  },
  401: { description: "`invalid_client` or `invalid_token`.", schema: oauth2ErrorSchema },
};

/**
 * The endpoints a client calls directly (token, revocation, introspection, userinfo, device authorization) answer a
 * binding's failure in RFC 6749's shape too (endpoint-errors.ts): 503 `temporarily_unavailable` with `Retry-After`;
 * and their own failure, 500 `server_error`.
 */
export const OAUTH2_DIRECT_ERRORS: Record<number, AnswerDoc> = {
  ...OAUTH2_ERRORS,
  500: {
    description: "`server_error`: the service failed; the description names the request, for its log line.",
    schema: oauth2ErrorSchema,
  },
  503: {
    description:
      "`temporarily_unavailable`: a part of the platform failed or did not answer; see `Retry-After`.",
    schema: oauth2ErrorSchema,
  },
};

export const tokenAnswerSchema = z.object({
  access_token: z
    .string()
    .describe(
      "A JWT of type at+jwt; `aud` is the resource asked for, else the client. With `audience=provider:<name>`: " +
        "the provider's own token (the token vault, docs/agents.md)",
    ),
  token_type: z
    .enum(["Bearer", "DPoP"])
    .describe("DPoP (RFC 9449) when the request carried a DPoP proof: the access token is bound to its key"),
  expires_in: z
    .number()
    .int()
    .optional()
    .describe("Always, but for a provider's token (token vault) whose provider gave no expiry"),
  refresh_token: z.string().optional().describe(`\`${REFRESH_TOKEN_PREFIX}…\`, single use, rotates`),
  id_token: z.string().optional().describe("With the openid scope"),
  scope: z.string(),
  issued_token_type: z
    .string()
    .optional()
    .describe("Token exchange (RFC 8693 §2.2.1): `urn:ietf:params:oauth:token-type:access_token`"),
  authorization_details: z
    .array(z.looseObject({ type: z.string() }))
    .optional()
    .describe("RFC 9396 §7.1: the authorization details granted, the access token's too"),
});

export const introspectionSchema = z.object({
  active: z.boolean(),
  client_id: z.string().optional(),
  exp: z.number().optional(),
  iat: z.number().optional(),
  iss: z.string().optional(),
  scope: z.string().optional(),
  sub: z.string().optional(),
  token_type: z.enum(["Bearer", "DPoP", "refresh_token"]).optional(),
  cnf: z
    .object({ jkt: z.string() })
    .optional()
    .describe("RFC 9449 §6.2: the thumbprint of the DPoP key the access token is bound to"),
  aud: z.union([z.string(), z.array(z.string())]).optional(),
  jti: z.string().optional(),
  org_id: z
    .string()
    .optional()
    .describe("The organization the client acts in, while the user is still an active member of it"),
  act: z
    .looseObject({ sub: z.string(), client_id: z.string().optional() })
    .optional()
    .describe(
      "RFC 8693 §4.1: who acts for `sub` (a token exchange), with the earlier actors nested in `act`",
    ),
  auth_time: z.number().int().optional().describe("Contract §12: when the user last authenticated (seconds)"),
  acr: z.string().optional().describe("`urn:edge-auth:acr:pwd` < `…:mfa` < `…:phr` (phishing-resistant)"),
  amr: z
    .array(z.string())
    .optional()
    .describe("RFC 8176 methods: `pwd`, `otp`, `mfa`, `hwk`, `email`, `sms`, `fed`"),
  authorization_details: z
    .array(z.looseObject({ type: z.string() }))
    .optional()
    .describe("RFC 9396 §9.2: the authorization details the token (or the refresh token's grant) carries"),
});

export const userinfoSchema = z.looseObject({
  sub: z.string(),
  name: z.string().optional(),
  picture: z.string().optional(),
  locale: z.string().optional(),
  email: z.string().optional(),
  email_verified: z.boolean().optional(),
  phone_number: z.string().optional(),
  phone_number_verified: z.boolean().optional(),
  org_id: z.string().optional().describe("The organization the client acts in (an active membership)"),
});

export const discoverySchema = z.looseObject({
  issuer: z.string(),
  authorization_endpoint: z.string(),
  token_endpoint: z.string(),
  jwks_uri: z.string(),
  registration_endpoint: z.string().optional(),
  device_authorization_endpoint: z.string(),
  grant_types_supported: z.array(z.string()),
  scopes_supported: z.array(z.string()),
  code_challenge_methods_supported: z.array(z.string()),
  client_id_metadata_document_supported: z.boolean(),
  authorization_details_types_supported: z
    .array(z.string())
    .describe(
      "RFC 9396 §10.1: the authorization details types some client may use (set per client by the admin)",
    ),
  end_session_endpoint: z
    .string()
    .optional()
    .describe("RP-Initiated Logout 1.0; with the built-in page only"),
  backchannel_logout_supported: z.boolean(),
  backchannel_logout_session_supported: z.boolean(),
});

export const deviceAuthorizationSchema = z.object({
  device_code: z.string(),
  user_code: z.string().describe("XXXX-XXXX, to show"),
  verification_uri: z.string(),
  verification_uri_complete: z.string(),
  expires_in: z.number().int(),
  interval: z.number().int().describe("Seconds between polls"),
});

/** RFC 7591 §3.2.1 client information. */
export const clientInformationSchema = z.object({
  client_id: z.string(),
  client_id_issued_at: z.number().int(),
  client_name: z.string(),
  redirect_uris: z.array(z.string()),
  application_type: z.enum(["web", "native"]),
  token_endpoint_auth_method: z.string(),
  grant_types: z.array(z.string()),
  response_types: z.array(z.string()),
  scope: z.string(),
  client_uri: z.string().optional(),
  logo_uri: z.string().optional(),
  contacts: z.array(z.string()).optional(),
  software_id: z.string().optional(),
  software_version: z.string().optional(),
  dpop_bound_access_tokens: z.boolean(),
  require_pushed_authorization_requests: z.boolean(),
  post_logout_redirect_uris: z.array(z.string()).optional(),
  backchannel_logout_uri: z.string().optional(),
  backchannel_logout_session_required: z.boolean().optional(),
  jwks: z.object({ keys: z.array(z.record(z.string(), z.unknown())) }).optional(),
  jwks_uri: z.string().optional(),
  registration_client_uri: z.string(),
});

export const registrationAnswerSchema = clientInformationSchema.extend({
  client_secret: z.string().optional().describe("Confidential clients only; shown once"),
  client_secret_expires_at: z.literal(0).optional(),
  registration_access_token: z
    .string()
    .describe(`\`${REGISTRATION_TOKEN_PREFIX}…\`: the bearer for registration_client_uri; shown once`),
});

/** RFC 7592 §2.2: the answer to PUT, with the new registration access token (the old one no longer works). */
export const replacedRegistrationSchema = clientInformationSchema.extend({
  registration_access_token: z
    .string()
    .describe(
      `\`${REGISTRATION_TOKEN_PREFIX}…\`: the new bearer for registration_client_uri; the previous one stopped working`,
    ),
});

/** RFC 7591 §2 client metadata, as a request (unknown fields are ignored). */
export const clientMetadataSchema = z.looseObject({
  redirect_uris: z.array(z.string()).optional(),
  client_name: z.string().optional(),
  application_type: z.enum(["web", "native"]).optional(),
  token_endpoint_auth_method: z
    .enum(["client_secret_basic", "client_secret_post", "private_key_jwt", "none"])
    .optional(),
  grant_types: z.array(z.string()).optional(),
  response_types: z.array(z.string()).optional(),
  scope: z.string().optional(),
  client_uri: z.string().optional(),
  logo_uri: z.string().optional(),
  contacts: z.array(z.string()).optional(),
  software_id: z.string().optional(),
  software_version: z.string().optional(),
  dpop_bound_access_tokens: z.boolean().optional().describe("RFC 9449 §5.2"),
  require_pushed_authorization_requests: z.boolean().optional().describe("RFC 9126 §6"),
  post_logout_redirect_uris: z.array(z.string()).optional().describe("RP-Initiated Logout 1.0 §3.1"),
  backchannel_logout_uri: z.string().optional().describe("Back-Channel Logout 1.0 §2.2"),
  backchannel_logout_session_required: z.boolean().optional(),
  jwks: z
    .object({ keys: z.array(z.record(z.string(), z.unknown())) })
    .optional()
    .describe("private_key_jwt"),
  jwks_uri: z.string().optional().describe("private_key_jwt"),
});
