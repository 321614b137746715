import { z } from "zod";
import type { CoreConfig, FeatureSettingsSlice } from "../config";
import { ConfigError } from "../errors";
import { bool, list, settingsSlice, url } from "../settings/kit";
import { relatedOrigins } from "./webauthn-related-origins";

/** The sign-in methods' own settings (contract §9): passwords, passwordless, MFA, WebAuthn, the lockout. */
const vars = z.object({
  AUTH_PASSWORD_MIN_LENGTH: z.coerce.number().int().min(3).max(50).default(9),
  AUTH_PASSWORD_HIBP_ENABLED: bool(false),
  AUTH_PASSWORD_HIBP_URL: url.default("https://api.pwnedpasswords.com/range"),
  /** Per-account lockout (contract §13): failures of one factor within the window that lock it. */
  AUTH_LOCKOUT_THRESHOLD: z.coerce.number().int().min(3).max(1000).default(10),
  AUTH_LOCKOUT_WINDOW: z.coerce.number().int().positive().default(3600),
  AUTH_ANONYMOUS_USERS_ENABLED: bool(false),
  AUTH_EMAIL_PASSWORDLESS_ENABLED: bool(false),
  AUTH_OTP_EMAIL_ENABLED: bool(false),
  AUTH_SMS_PASSWORDLESS_ENABLED: bool(false),
  AUTH_MFA_ENABLED: bool(false),
  AUTH_MFA_TOTP_ISSUER: z.string().min(1).max(100).default("edge-auth"),
  /** The passkey second step's user verification (issue 47): `required` refuses a key that only proves presence. */
  AUTH_MFA_WEBAUTHN_USER_VERIFICATION: z.enum(["preferred", "required"]).default("preferred"),
  AUTH_REQUIRE_ELEVATED_CLAIM: z.enum(["disabled", "recommended", "required"]).default("disabled"),
  AUTH_WEBAUTHN_ENABLED: bool(false),
  /** Defaults to the host of AUTH_CLIENT_URL. */
  AUTH_WEBAUTHN_RP_ID: z.string().min(1).optional(),
  AUTH_WEBAUTHN_RP_NAME: z.string().min(1).default("edge-auth"),
  /** Defaults to the origin of AUTH_CLIENT_URL. */
  AUTH_WEBAUTHN_RP_ORIGINS: list(),
  /** WebAuthn L3 §5.11: a superset of the RP origins, served as `/.well-known/webauthn` (./webauthn-related-origins.ts). */
  AUTH_WEBAUTHN_RELATED_ORIGINS: list(),
});

/** SMS sign-in needs a way to send: the app's SEND_SMS hook, the development store or a provider with credentials. */
function checkSmsTransport(data: z.output<typeof vars>, core: CoreConfig) {
  if (
    !data.AUTH_SMS_PASSWORDLESS_ENABLED ||
    core.sms.provider ||
    core.devTransports.sms ||
    core.hooks.SEND_SMS
  )
    return;
  throw new ConfigError(
    "invalid configuration: AUTH_SMS_PASSWORDLESS_ENABLED needs AUTH_SMS_PROVIDER, AUTH_HOOK_SEND_SMS_URL (or AUTH_DEV_SMS in development)",
  );
}

const resolve = (data: z.output<typeof vars>, core: CoreConfig) => {
  checkSmsTransport(data, core);
  const client = new URL(core.urls.client);
  const origins = data.AUTH_WEBAUTHN_RP_ORIGINS.length > 0 ? data.AUTH_WEBAUTHN_RP_ORIGINS : [client.origin];
  return {
    password: {
      minLength: data.AUTH_PASSWORD_MIN_LENGTH,
      /** Have I Been Pwned's range API (`AUTH_PASSWORD_HIBP_*`): a leaked password is refused. */
      hibp: { enabled: data.AUTH_PASSWORD_HIBP_ENABLED, url: data.AUTH_PASSWORD_HIBP_URL },
    },
    lockout: { threshold: data.AUTH_LOCKOUT_THRESHOLD, window: data.AUTH_LOCKOUT_WINDOW },
    /** The passwordless methods switched on. */
    passwordless: {
      anonymous: data.AUTH_ANONYMOUS_USERS_ENABLED,
      emailLink: data.AUTH_EMAIL_PASSWORDLESS_ENABLED,
      emailOtp: data.AUTH_OTP_EMAIL_ENABLED,
      sms: data.AUTH_SMS_PASSWORDLESS_ENABLED,
    },
    mfa: {
      enabled: data.AUTH_MFA_ENABLED,
      totpIssuer: data.AUTH_MFA_TOTP_ISSUER,
      webauthnUserVerification: data.AUTH_MFA_WEBAUTHN_USER_VERIFICATION,
    },
    /** `AUTH_REQUIRE_ELEVATED_CLAIM`: whether changing a credential asks for a fresh passkey proof. */
    elevation: data.AUTH_REQUIRE_ELEVATED_CLAIM,
    /** The WebAuthn relying party: id (a domain) and the origins whose ceremonies are accepted. */
    webauthn: {
      enabled: data.AUTH_WEBAUTHN_ENABLED,
      rpId: data.AUTH_WEBAUTHN_RP_ID ?? client.hostname,
      rpName: data.AUTH_WEBAUTHN_RP_NAME,
      origins,
      /** The related origins (WebAuthn L3 §5.11), every RP origin among them; empty: none, no `/.well-known/webauthn`. */
      relatedOrigins: relatedOrigins(data.AUTH_WEBAUTHN_RELATED_ORIGINS, origins),
    },
  };
};

export const authSettings: FeatureSettingsSlice = settingsSlice(vars, resolve);

type AuthSettings = ReturnType<typeof resolve>;
declare module "../config" {
  interface FeatureSettings extends AuthSettings {}
}
