/**
 * How a person authenticated, in the words relying parties read (contract §12): RFC 8176 `amr` values and this
 * service's three `acr` levels, ordered `pwd` < `mfa` < `phr`. A browser session (session.ts) and a bearer's session
 * (oauth2/interaction.ts) both come down to a set of sign-in methods, each with the time it was last performed; this
 * file says what such a set is worth.
 */

/** The `acr` values, weakest first (discovery's `acr_values_supported`). */
export const ACR_VALUES = [
  "urn:edge-auth:acr:pwd",
  "urn:edge-auth:acr:mfa",
  "urn:edge-auth:acr:phr",
] as const;

export type Acr = (typeof ACR_VALUES)[number];

/** A level is an index into `ACR_VALUES`: 0 one factor, 1 two independent factors, 2 phishing-resistant. */
export type Level = 0 | 1 | 2;

export const LEVEL = { pwd: 0, mfa: 1, phr: 2 } as const satisfies Record<string, Level>;

/**
 * The ways a person proves who they are here. `sign-in` is a sign-in whose way is not known (a page cookie from
 * before this record, an API session whose `method` column is empty or names no way we can vouch for).
 */
export const SIGN_IN_METHODS = [
  "password",
  "totp",
  "passkey",
  "email-link",
  "email-otp",
  "sms-otp",
  "provider",
  "sign-in",
] as const;

export type SignInMethod = (typeof SIGN_IN_METHODS)[number];

/** When each method was last performed in one session, ms. */
export type MethodTimes = Partial<Record<SignInMethod, number>>;

/**
 * RFC 8176 §2 values per method. A passkey is `hwk` (a key the authenticator holds); `user` is not claimed: the
 * ceremony prefers but does not require user verification (src/auth/webauthn/ceremonies.ts), and the API's answer
 * does not say whether it happened. A provider sign-in is `fed`: RFC 8176 has no value for a federated sign-in, and
 * `fed` is the one relying parties already meet (Microsoft Entra ID sends it); its strength is the provider's, which
 * this service cannot vouch for.
 */
const AMR: Record<SignInMethod, string[]> = {
  password: ["pwd"],
  totp: ["otp"],
  passkey: ["hwk"],
  "email-link": ["email"],
  "email-otp": ["email", "otp"],
  "sms-otp": ["sms", "otp"],
  provider: ["fed"],
  "sign-in": [],
};

/**
 * What each method proves control of. Two methods are two factors only when they prove different things: a magic link
 * and an email code are the same mailbox. An unknown sign-in is a factor of its own kind: every way to sign in is
 * something other than the TOTP app or passkey it might be paired with.
 */
const CHANNEL: Record<SignInMethod, string> = {
  password: "knowledge",
  totp: "authenticator",
  passkey: "security-key",
  "email-link": "mailbox",
  "email-otp": "mailbox",
  "sms-otp": "phone",
  provider: "provider",
  "sign-in": "unknown",
};

/** A TOTP code is a second factor only: it never signs anyone in on its own (contract §2, `mfaTotp:` tickets). */
const isFirstFactor = (method: SignInMethod) => method !== "totp";

/** The methods of a record, in the catalogue's order. */
export const methodsOf = (times: MethodTimes): SignInMethod[] =>
  SIGN_IN_METHODS.filter((method) => times[method] !== undefined);

const channels = (methods: SignInMethod[]) => new Set(methods.map((method) => CHANNEL[method])).size;

/**
 * The level a set of methods reaches, or undefined when it holds no first factor (a TOTP code alone is nobody's
 * sign-in). A passkey is phishing-resistant (bound to the origin, WebAuthn §13.4.9); two channels are two factors.
 */
export function levelOf(methods: SignInMethod[]): Level | undefined {
  if (!methods.some(isFirstFactor)) return undefined;
  if (methods.includes("passkey")) return LEVEL.phr;
  return channels(methods) >= 2 ? LEVEL.mfa : LEVEL.pwd;
}

/** RFC 8176 values of a set of methods, `mfa` included when they are two factors (RFC 8176 §2, "mfa"). */
export function amrOf(methods: SignInMethod[]): string[] {
  const values = new Set(methods.flatMap((method) => AMR[method]));
  if (channels(methods) >= 2) values.add("mfa");
  return [...values];
}

export const acrOf = (level: Level): Acr => ACR_VALUES[level];

/** The known `acr_values` of a request (OIDC Core §3.1.2.1), in its order; unknown values are ignored. */
export const knownAcrValues = (values: string[]): Acr[] =>
  values.filter((value): value is Acr => (ACR_VALUES as readonly string[]).includes(value));

export const levelOfAcr = (value: Acr): Level => ACR_VALUES.indexOf(value) as Level;

/**
 * The level a request's `acr_values` ask for at least: the weakest of the known values. They come in order of
 * preference (OIDC Core §3.1.2.1), and reaching any of them meets the request; levels are ordered, so a stronger
 * sign-in satisfies a weaker class too. Undefined: none asked.
 */
export function floorOf(values: readonly Acr[]): Level | undefined {
  return values.length ? (Math.min(...values.map(levelOfAcr)) as Level) : undefined;
}

/**
 * The sign-in methods behind a session row's `method` (src/auth/sign-in/method.ts: named by the flow that made it).
 * An elevation (`/elevate/webauthn/verify`) leaves the column empty; oauth2/interaction.ts reads the elevated claim
 * instead.
 * Anything else (the OAuth2 page's own sessions, an admin's, a PAT) is a sign-in of unknown way.
 */
export function methodsOfSessionRow(method: string | null): SignInMethod[] {
  if (method?.startsWith("provider:") || method === "id-token") return ["provider"];
  switch (method) {
    case "email-password":
      return ["password"];
    case "webauthn":
      return ["passkey"];
    // An upgrade's passkey before its first use with user verification (src/auth/webauthn/upgrade.ts): it proves no
    // more than the sign-in it was made after, which the row does not name.
    case "webauthn-upgrade":
      return ["sign-in"];
    case "email-link":
    case "pkce-link":
      return ["email-link"];
    case "email-otp":
      return ["email-otp"];
    case "sms-otp":
      return ["sms-otp"];
    // The second step of a sign-in whose first step (a password, a mailed code…) the row does not name.
    case "mfa-totp":
      return ["sign-in", "totp"];
    // The email step follows no mailbox sign-in (sign-in/pipeline.ts, owedStep): its first factor is another channel.
    case "mfa-email":
      return ["sign-in", "email-otp"];
    // A key with user verification after a first factor (issue 47): a passkey's proof. Without verification
    // (`mfa-webauthn`) nothing is claimed beyond the sign-in: presence alone is no `phr`.
    case "mfa-passkey":
      return ["sign-in", "passkey"];
    default:
      return ["sign-in"];
  }
}

/**
 * A sign-in a code or device approval is made from (contract §12): how and when, and the browser session at this
 * service it belongs to (`sid`: ID tokens and back-channel logout name it).
 */
export interface SignIn extends Authentication {
  sid?: string | null;
}

/** How and when a user signed in (contract §12), as ID tokens, access tokens and introspection report it. */
export interface Authentication {
  /** ms */
  authTime: number;
  acr?: string | null;
  amr?: string[] | null;
}
