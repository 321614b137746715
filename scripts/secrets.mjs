// Generates the secrets the service needs: an RS256 private JWK with a kid, an AES-256 key, an admin secret, and the
// Supabase face's two API keys (a publishable one for supabase-js, a secret one for server code).
// Used by `npm start` (written once to .dev.vars), by the test configuration and by the benchmark.
import { generateKeyPairSync, randomBytes, randomUUID } from "node:crypto";

/** A private signing JWK of `alg`: RS256 (the default), EdDSA (Ed25519) or ES256 (P-256). */
export function generateSigningJwk(alg = "RS256") {
  const { privateKey } =
    alg === "EdDSA"
      ? generateKeyPairSync("ed25519")
      : alg === "ES256"
        ? generateKeyPairSync("ec", { namedCurve: "P-256" })
        : generateKeyPairSync("rsa", { modulusLength: 2048 });
  return { ...privateKey.export({ format: "jwk" }), kid: randomUUID(), alg, use: "sig" };
}

export function generateSecrets() {
  return {
    AUTH_JWT_PRIVATE_KEYS: JSON.stringify([generateSigningJwk()]),
    AUTH_ENCRYPTION_KEY: randomBytes(32).toString("hex"),
    AUTH_ADMIN_SECRET: randomBytes(24).toString("base64url"),
    AUTH_SUPABASE_PUBLISHABLE_KEYS: `sb_publishable_${randomBytes(18).toString("base64url")}`,
    AUTH_SUPABASE_SECRET_KEYS: `sb_secret_${randomBytes(24).toString("base64url")}`,
  };
}

/**
 * What a local run switches on besides its secrets: the development mail and SMS transports (messages are kept and
 * readable at /auth/v1/dev/mailbox and /auth/v1/dev/sms; never set them in production) and the sign-in methods that
 * are off by default, so that every flow can be tried by hand. Used by `npm start` and by the compatibility tests'
 * `wrangler dev`.
 */
export const DEVELOPMENT_VARS = {
  AUTH_DEV_MAILBOX: "true",
  AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
  AUTH_OTP_EMAIL_ENABLED: "true",
  AUTH_ANONYMOUS_USERS_ENABLED: "true",
  AUTH_MFA_ENABLED: "true",
  AUTH_WEBAUTHN_ENABLED: "true",
  AUTH_DEV_SMS: "true",
  AUTH_SMS_PASSWORDLESS_ENABLED: "true",
  // The OAuth2 / OpenID Connect authorization server; create a client with `npm run oauth2:client` (README).
  AUTH_OAUTH2_PROVIDER_ENABLED: "true",
  // MCP hosts and CLIs register themselves (RFC 7591) on a local server; production keeps the default, off.
  AUTH_OAUTH2_PROVIDER_REGISTRATION: "open",
  // Client ID metadata documents (and later webhooks, IdP metadata) served by a program on this machine: loopback
  // http is fetched while AUTH_SERVER_URL is itself local (contract §1's outbound-URL policy); production refuses it.
  AUTH_OUTBOUND_ALLOW_LOCAL: "true",
  // Supabase's API at /supabase: a supabase-js app points createClient at it (docs/supabase.md).
  AUTH_SUPABASE_API_ENABLED: "true",
};

/** One `NAME='value'` line per entry: single quotes keep JSON literal in .dev.vars / .env files (dotenv rules). */
export function toEnvLines(values) {
  return Object.entries(values).map(([name, value]) => {
    if (String(value).includes("'")) throw new Error(`${name} cannot be written to an env file`);
    return `${name}='${value}'`;
  });
}
