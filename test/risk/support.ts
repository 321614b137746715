// What the risk tests share (test/risk/): places as Cloudflare's `request.cf` gives them, requests from a device at a
// place, a user whose own browser is known by its cookie, and the `signin.risk` audit rows of a user.
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { expect } from "vitest";
import { totpCode, totpStep } from "../../src/auth/mfa/totp";
import {
  mailbox,
  PASSWORD,
  type TestService,
  uniqueAddress,
  uniqueEmail,
  type WireSession,
} from "../helpers";
import { userD1 } from "../support/shards";

/** `request.cf` as the platform sets it: strings for the coordinates, a number for the ASN. */
type Cf = Partial<IncomingRequestCfProperties>;

export const BERLIN: Cf = { country: "DE", city: "Berlin", latitude: "52.52", longitude: "13.40", asn: 3320 };
/** 255 km from Berlin: never travel, whatever the time between. */
export const HAMBURG: Cf = {
  country: "DE",
  city: "Hamburg",
  latitude: "53.55",
  longitude: "9.99",
  asn: 3320,
};
/** 16,000 km from Berlin. */
export const SYDNEY: Cf = {
  country: "AU",
  city: "Sydney",
  latitude: "-33.87",
  longitude: "151.21",
  asn: 1221,
};

export const CHROME_MAC =
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
export const FIREFOX_WINDOWS =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0";

export interface From {
  cf?: Cf;
  address?: string;
  cookie?: string | null;
  userAgent?: string;
}

/** A stranger's device: another browser, another address. */
export const elsewhere = (cf?: Cf): From => ({ cf, address: uniqueAddress(), userAgent: FIREFOX_WINDOWS });

function headersOf(from: From): Record<string, string> {
  return {
    "user-agent": from.userAgent ?? CHROME_MAC,
    ...(from.address ? { "cf-connecting-ip": from.address } : {}),
    ...(from.cookie ? { cookie: `edge_auth_device=${from.cookie}` } : {}),
  };
}

export function deviceCookieOf(response: Response): string | null {
  const line = response.headers.getSetCookie().find((value) => value.startsWith("edge_auth_device="));
  return line ? line.slice("edge_auth_device=".length).split(";")[0]! : null;
}

export function signInFrom(
  svc: TestService,
  email: string,
  from: From,
  password = PASSWORD,
): Promise<Response> {
  return svc.request("POST", "/signin/email-password", {
    json: { email, password },
    headers: headersOf(from),
    cf: from.cf,
  });
}

export interface Owner {
  email: string;
  userId: string;
  session: WireSession;
  /** The owner's own browser, known by its cookie. */
  home: From;
}

/**
 * A user signed up from `cf` on their own browser, which then signed in once bringing back the cookie it was given
 * (so the account knows that cookie: the next sign-in from it is a known device's).
 */
export async function ownerAt(svc: TestService, cf: Cf, email = uniqueEmail("risk")): Promise<Owner> {
  const home: From = { cf, address: uniqueAddress(), userAgent: CHROME_MAC };
  const signedUp = await svc.request("POST", "/signup/email-password", {
    json: { email, password: PASSWORD },
    headers: headersOf(home),
    cf,
  });
  expect(signedUp.status, await signedUp.clone().text()).toBe(200);
  const { session } = (await signedUp.json()) as { session: WireSession };
  home.cookie = deviceCookieOf(signedUp);
  expect(home.cookie).toBeTruthy();
  const again = await signInFrom(svc, email, home);
  expect(again.status, await again.clone().text()).toBe(200);
  return { email, userId: session.user.id, session, home };
}

/** Turns TOTP on for the user through the API, as their authenticator app would. */
export async function withTotp(svc: TestService, owner: Owner): Promise<void> {
  const generated = await svc.get("/mfa/totp/generate", owner.session.accessToken);
  const { totpSecret } = (await generated.json()) as { totpSecret: string };
  const secret = decodeBase32IgnorePadding(totpSecret);
  const code = totpCode(secret, totpStep(Date.now()));
  const activated = await svc.post("/user/mfa", { code, activeMfaType: "totp" }, owner.session.accessToken);
  expect(activated.status).toBe(200);
}

/** The owner's address proven (the admin API's PATCH), as the email step requires. */
export async function verified(svc: TestService, owner: Owner): Promise<void> {
  const patched = await svc.request("PATCH", `/admin/users/${owner.userId}`, {
    json: { emailVerified: true },
    headers: { "x-hasura-admin-secret": String(svc.env.AUTH_ADMIN_SECRET) },
  });
  expect(patched.status).toBe(200);
}

/** The code of the newest second-step mail to `email`. */
export async function mailedCode(svc: TestService, email: string): Promise<string> {
  const [mail] = await mailbox(svc, email);
  expect(mail!.subject).toBe("Your second-step code");
  return /\b(\d{6})\b/.exec(mail!.text)![1]!;
}

// biome-ignore lint/suspicious/noExplicitAny: the audit's JSON, read by each test
export type RiskRow = { outcome: string; reason: string; ip: string | null; detail: any };

/** The user's `signin.risk` audit rows, oldest first. */
export async function riskRows(userId: string): Promise<RiskRow[]> {
  const { results } = await userD1(userId)
    .prepare(
      "SELECT outcome, reason, ip, detail FROM audit_events WHERE type = 'signin.risk' AND user_id = ? ORDER BY at, rowid",
    )
    .bind(userId)
    .all<{ outcome: string; reason: string; ip: string | null; detail: string }>();
  return results.map((row) => ({ ...row, detail: JSON.parse(row.detail) }));
}

export const lastRisk = async (userId: string) => (await riskRows(userId)).at(-1)!;
