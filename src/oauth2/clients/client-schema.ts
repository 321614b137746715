import { z } from "zod";
import { brandLogoUrlSchema } from "../../lib/brand";
import { authorizationDetailsTypesSchema } from "../authorization-details";
import { LOOPBACK_HOSTS } from "./redirect-uris";

/** The scopes the authorization server knows (contract §3.5, `scopes_supported`). */
export const SUPPORTED_SCOPES = [
  "openid",
  "profile",
  "email",
  "phone",
  "offline_access",
  "graphql",
  // A machine client's token for the AuthZEN API (src/permissions/, contract platform.md §2).
  "authzen",
] as const;
/**
 * Grants by which a client gets a person's tokens without the person at this server: RFC 8693 token exchange
 * (src/oauth2/token-exchange.ts) and RFC 7523 §2.1 JWT bearer with the ID-JAG on it (src/oauth2/jwt-bearer.ts). Like
 * `client_credentials`, for confidential clients an admin made or allowed (contract §3.6, §12).
 */
/** OpenID CIBA Core 1.0 §10.1: the token request of a backchannel authentication (src/oauth2/ciba/). */
export const CIBA_GRANT = "urn:openid:params:grant-type:ciba";
export const DELEGATION_GRANTS = [
  "urn:ietf:params:oauth:grant-type:token-exchange",
  "urn:ietf:params:oauth:grant-type:jwt-bearer",
  // CIBA asks a person by a hint the client chose, and mails them on its say-so: an admin allows it, for a client
  // that proves itself (§4: CIBA clients are confidential).
  CIBA_GRANT,
] as const;
export const GRANT_TYPES = [
  "authorization_code",
  "refresh_token",
  "urn:ietf:params:oauth:grant-type:device_code",
  "client_credentials",
  ...DELEGATION_GRANTS,
] as const;
/** A new client's grant types when none are given: a web app's. */
export const DEFAULT_GRANT_TYPES = ["authorization_code", "refresh_token"];
export const AUTH_METHODS = ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"] as const;

/**
 * A client's public keys (RFC 7591 `jwks`, RFC 7517), for `private_key_jwt`: a few keys, each public. A private
 * member (`d`, the RSA primes, a symmetric `k`) is refused: a client that sends its private key has leaked it.
 */
const PRIVATE_JWK_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "k"];
export const publicJwksSchema = z.object({
  keys: z
    .array(
      z
        .looseObject({ kty: z.string().max(10) })
        .refine(
          (key) => PRIVATE_JWK_MEMBERS.every((member) => !(member in key)),
          "keys must be public: private members (d, p, q, k, …) are refused",
        )
        .refine((key) => JSON.stringify(key).length <= 4096, "a key is longer than 4096 characters"),
    )
    .min(1)
    .max(10),
});

/** A new client's scopes when none are given: no `graphql`, which hands out Hasura claims, unless asked for. */
export const DEFAULT_SCOPES = ["openid", "profile", "email", "offline_access"];

/**
 * Characters that change how the text around them reads without showing themselves: controls (Cc), formatting (Cf:
 * the bidi overrides and isolates U+202A–202E and U+2066–2069, zero-width U+200B–200F, U+FEFF) and the line and
 * paragraph separators U+2028/2029. In a client's name they turn "Acme <U+202E>gnp.exe" into "Acme exe.png" on the
 * consent screen, or make a look-alike of a trusted name (Unicode TR 36 §2, UTS 39).
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\u2028\u2029]/u;

/**
 * A client's name, the words the consent screen puts first: one rule for every way a client comes to be (the admin
 * API, registration, metadata documents).
 */
export const clientNameSchema = z
  .string()
  // Before trimming, which would quietly drop some of them (U+FEFF, line breaks) from a name that tried them.
  .refine((name) => !INVISIBLE.test(name), "must not hold control or invisible formatting characters")
  .trim()
  .min(1)
  .max(200);

/**
 * Where a client may be sent back (RFC 6749 §3.1.2, RFC 9700 §2.1, RFC 8252 §7): an absolute URI without a
 * fragment, matched exactly later. `https`, or `http` on a loopback host (native apps, local development), or a
 * private-use scheme of a native app, which holds a dot (`com.example.app:/callback`, RFC 8252 §7.1).
 */
export const redirectUri = z
  .string()
  .max(2048)
  .superRefine((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: "custom", message: "must be an absolute URI" });
      return;
    }
    const scheme = url.protocol.slice(0, -1);
    if (value.includes("#")) ctx.addIssue({ code: "custom", message: "must not have a fragment" });
    else if (url.username || url.password)
      ctx.addIssue({ code: "custom", message: "must not hold credentials" });
    else if (scheme === "http" && !LOOPBACK_HOSTS.has(url.hostname)) {
      ctx.addIssue({ code: "custom", message: "http is allowed only for loopback hosts; use https" });
    } else if (scheme !== "http" && scheme !== "https" && !scheme.includes(".")) {
      ctx.addIssue({
        code: "custom",
        message: "must be https, loopback http, or a reverse-domain app scheme",
      });
    }
  });

/**
 * A relying party's origin for FedCM (W3C FedCM §4, the `Origin` of the ID assertion request, compared exactly):
 * `https://host[:port]`, or `http` on a loopback host (local development), nothing after it. Stored serialized, as
 * the browser sends it (`https://app.example`, no trailing slash, the default port dropped).
 */
export const fedcmOrigin = z
  .string()
  .max(300)
  .superRefine((value, ctx) => {
    let url: URL | undefined;
    try {
      url = new URL(value);
    } catch {}
    const loopback = url?.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname);
    if (!url || (url.protocol !== "https:" && !loopback)) {
      ctx.addIssue({ code: "custom", message: "must be an https origin (http only on a loopback host)" });
    } else if (url.origin !== value) {
      ctx.addIssue({
        code: "custom",
        message: `must be an origin alone, as browsers send it: ${url.origin}`,
      });
    }
  });

/**
 * RFC 7591 makes `web` the default, but MCP hosts and CLIs register loopback or private-use redirect URIs without
 * saying `native`; refusing them would only make every such client fail. A client that names no type and has no
 * https redirect URI at all is taken as native (and held to native rules); one that says `web` stays web.
 */
export function inferredApplicationType(redirectUris: string[]): "web" | "native" {
  if (redirectUris.length === 0) return "web";
  return redirectUris.some((uri) => uri.startsWith("https://")) ? "web" : "native";
}

/** `POST /admin/oauth2/clients` and `PUT …/{clientId}` (contract §10): camelCase, unknown keys refused. */
export const clientBodySchema = z
  .strictObject({
    clientName: clientNameSchema,
    redirectUris: z.array(redirectUri).max(20).default([]),
    scopes: z.array(z.enum(SUPPORTED_SCOPES)).max(SUPPORTED_SCOPES.length).optional(),
    grantTypes: z.array(z.enum(GRANT_TYPES)).min(1).max(GRANT_TYPES.length).optional(),
    tokenEndpointAuthMethod: z.enum(AUTH_METHODS).optional(),
    accessTokenLifetime: z.number().int().min(60).max(86_400).optional(),
    refreshTokenLifetime: z.number().int().min(60).max(31_536_000).optional(),
    /** `native`: loopback redirect URIs match on any port (RFC 8252 §7.3). Inferred when absent. */
    applicationType: z.enum(["web", "native"]).optional(),
    /** RFC 8707 resources this client's tokens may be for: some of the deployment's; absent: all of them. */
    resources: z.array(z.string().max(2048)).max(20).optional(),
    /** The logo its consent screen shows (an admin's client only, contract §13): https. */
    logoUri: brandLogoUrlSchema.nullable().optional(),
    /** RFC 9449 §5.2: every token request must carry a DPoP proof. */
    dpopBoundAccessTokens: z.boolean().optional(),
    /** RFC 9126 §6: authorization requests only through PAR. */
    requirePushedAuthorizationRequests: z.boolean().optional(),
    /** RP-Initiated Logout 1.0: where a logout may send the browser back to, matched exactly. */
    postLogoutRedirectUris: z.array(redirectUri).max(20).optional(),
    /** OpenID CIBA Core §4: how this client gets a backchannel authentication's outcome; null: no CIBA. */
    backchannelTokenDeliveryMode: z.enum(["poll", "ping"]).nullable().optional(),
    /** CIBA ping mode: where the ping is posted (https, under the outbound-URL policy). */
    backchannelClientNotificationEndpoint: z.string().max(2048).nullable().optional(),
    /** CIBA: the organization (id) whose active members alone the client may ask; its tokens carry it. */
    backchannelOrganization: z.string().max(100).nullable().optional(),
    /** Back-Channel Logout 1.0: where logout tokens are posted (https, under the outbound-URL policy). */
    backchannelLogoutUri: z.string().max(2048).nullable().optional(),
    backchannelLogoutSessionRequired: z.boolean().optional(),
    /** `private_key_jwt`: the client's public keys, or where to fetch them (one of the two). */
    jwks: publicJwksSchema.nullable().optional(),
    jwksUri: z.string().max(2048).nullable().optional(),
    /** Issuers whose assertions the client may exchange (JWT bearer, RFC 7523; ID-JAG), with their keys. */
    trustedIssuers: z
      .array(
        z.strictObject({
          issuer: z.string().min(1).max(2048),
          jwksUri: z.string().max(2048).optional(),
          jwks: publicJwksSchema.optional(),
          /** Only these users (ids) may be named by its assertions; absent: any user of this service. */
          users: z.array(z.string().min(1).max(128)).min(1).max(1000).optional(),
          /** Only active members of one of these organizations (ids); absent: any user of this service. */
          orgs: z.array(z.uuid()).min(1).max(100).optional(),
        }),
      )
      .max(10)
      .optional(),
    /** The token vault: providers whose tokens the client may get for a user who let it (operators.md §3). */
    vaultProviders: z
      .array(z.string().regex(/^[a-z]{2,20}$/, "a provider's name, as in AUTH_PROVIDER_<NAME>_…"))
      .max(20)
      .optional(),
    /** RFC 9396: the authorization details types it may ask for, each with its schema and display template. */
    authorizationDetailsTypes: authorizationDetailsTypesSchema.optional(),
    /** FedCM (src/fedcm/): the relying-party origins whose pages may ask the browser's prompt for this client. */
    fedcmOrigins: z.array(fedcmOrigin).max(20).optional(),
    /** RFC 7591 `policy_uri` and `tos_uri`: what the FedCM prompt links (its client metadata endpoint). */
    policyUri: brandLogoUrlSchema.nullable().optional(),
    tosUri: brandLogoUrlSchema.nullable().optional(),
  })
  .superRefine((body, ctx) => {
    const grants = body.grantTypes ?? DEFAULT_GRANT_TYPES;
    if (grants.includes("authorization_code") && body.redirectUris.length === 0) {
      ctx.addIssue({
        code: "custom",
        path: ["redirectUris"],
        message: "at least one redirect URI is needed for the authorization_code grant",
      });
    }
    if (body.tokenEndpointAuthMethod === "private_key_jwt" && !body.jwks === !body.jwksUri) {
      ctx.addIssue({
        code: "custom",
        path: ["jwks"],
        message: "private_key_jwt needs the client's public keys: jwks or jwksUri, one of the two",
      });
    }
    for (const [index, trusted] of (body.trustedIssuers ?? []).entries()) {
      if (!trusted.jwks === !trusted.jwksUri) {
        ctx.addIssue({
          code: "custom",
          path: ["trustedIssuers", index],
          message: "a trusted issuer needs its keys: jwks or jwksUri, one of the two",
        });
      }
    }
    if (grants.includes("client_credentials") && body.tokenEndpointAuthMethod === "none") {
      ctx.addIssue({
        code: "custom",
        path: ["grantTypes"],
        message: "client_credentials needs a confidential client, not tokenEndpointAuthMethod none",
      });
    }
    const ciba = grants.includes(CIBA_GRANT);
    if (ciba !== Boolean(body.backchannelTokenDeliveryMode)) {
      ctx.addIssue({
        code: "custom",
        path: ["backchannelTokenDeliveryMode"],
        message: `${CIBA_GRANT} and backchannelTokenDeliveryMode go together: set both or neither`,
      });
    }
    if (
      (body.backchannelTokenDeliveryMode === "ping") !==
      Boolean(body.backchannelClientNotificationEndpoint)
    ) {
      ctx.addIssue({
        code: "custom",
        path: ["backchannelClientNotificationEndpoint"],
        message: "backchannelClientNotificationEndpoint is required in ping mode, and only there",
      });
    }
    if (body.backchannelOrganization && !ciba) {
      ctx.addIssue({ code: "custom", path: ["backchannelOrganization"], message: `only with ${CIBA_GRANT}` });
    }
    // Token exchange and JWT bearer hand a user's tokens to whoever presents the client's id: only a client that
    // proves itself may (draft-ietf-oauth-identity-assertion-authz-grant §7.1; RFC 8693 §5).
    const delegation = grants.filter((grant) => (DELEGATION_GRANTS as readonly string[]).includes(grant));
    if (delegation.length > 0 && body.tokenEndpointAuthMethod === "none") {
      ctx.addIssue({
        code: "custom",
        path: ["grantTypes"],
        message: `${delegation.join(", ")} needs a confidential client, not tokenEndpointAuthMethod none`,
      });
    }
  });

export type ClientBody = z.infer<typeof clientBodySchema>;
