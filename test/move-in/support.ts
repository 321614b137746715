import { env } from "cloudflare:test";
import { encodeBase32UpperCaseNoPadding } from "@oslojs/encoding";
import bcrypt from "bcryptjs";
import type { TestService } from "../helpers";

/** A user as `npm run admin -- import-nhost` sends it: Nhost's rows, in the import's wire (src/move-in/wire.ts). */

export const admin = () => ({ "x-hasura-admin-secret": env.AUTH_ADMIN_SECRET as string });

export const sha256Hex = async (text: string) =>
  [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");

/** Nhost's column: `\x` and the lower-case hex SHA-256 of the token's text. */
export const nhostTokenHash = async (token: string) => `\\x${await sha256Hex(token)}`;

/** Nhost's Go bcrypt writes `$2a$`; bcryptjs `$2b$`: the same algorithm. */
export const nhostBcrypt = async (password: string) =>
  (await bcrypt.hash(password, 10)).replace(/^\$2b\$/, "$2a$");

export const iso = (ms: number) => new Date(ms).toISOString();
const DAY = 86_400_000;

export interface Secrets {
  refreshToken: string;
  pat: string;
  ticket: string;
  totpSecret: Uint8Array;
}

/** A Nhost user with every part, and the secrets a client or a mailbox holds for it. */
export async function nhostUser(
  overrides: Record<string, unknown> = {},
  passwordHash?: string,
): Promise<{ bundle: Record<string, unknown>; secrets: Secrets; id: string; email: string }> {
  const id = crypto.randomUUID();
  const email = `Moved-${id.slice(0, 8)}@Example.com`;
  const refreshToken = crypto.randomUUID();
  const pat = crypto.randomUUID();
  const ticket = `verifyEmail:${crypto.randomUUID()}`;
  const totpSecret = crypto.getRandomValues(new Uint8Array(20));
  const now = Date.now();
  const bundle = {
    id,
    createdAt: iso(now - 100 * DAY),
    updatedAt: iso(now - DAY),
    lastSeen: iso(now - DAY),
    disabled: false,
    displayName: "Moved User",
    avatarUrl: "",
    locale: "en",
    email,
    phoneNumber: null,
    emailVerified: true,
    phoneNumberVerified: false,
    newEmail: null,
    passwordHash: passwordHash ?? null,
    defaultRole: "user",
    roles: ["user", "me"],
    isAnonymous: false,
    activeMfaType: null,
    totpSecret: null,
    totpSecretUnreadable: false,
    ticket,
    ticketExpiresAt: iso(now + DAY),
    metadata: { plan: "pro" },
    providers: [{ id: crypto.randomUUID(), providerId: "github", providerUserId: `gh-${id.slice(0, 8)}` }],
    securityKeys: [],
    refreshTokens: [
      {
        id: crypto.randomUUID(),
        createdAt: iso(now - DAY),
        expiresAt: iso(now + 29 * DAY),
        metadata: null,
        type: "regular",
        hash: await nhostTokenHash(refreshToken),
      },
      {
        id: crypto.randomUUID(),
        createdAt: iso(now - DAY),
        expiresAt: iso(now + 365 * DAY),
        metadata: { name: "ci" },
        type: "pat",
        hash: await nhostTokenHash(pat),
      },
    ],
    ...overrides,
  };
  return { bundle, secrets: { refreshToken, pat, ticket, totpSecret }, id, email: email.toLowerCase() };
}

export const base32 = (secret: Uint8Array) => encodeBase32UpperCaseNoPadding(secret);

export interface ImportAnswer {
  results: {
    id: string;
    outcome: string;
    reasons?: { table: string; id: string; reason: string }[];
    warnings?: unknown[];
  }[];
}

export async function importUsers(svc: TestService, users: unknown[], dryRun = false): Promise<ImportAnswer> {
  const response = await svc.request("POST", "/admin/import/nhost/users", {
    json: { users, dryRun },
    headers: admin(),
  });
  if (response.status !== 200)
    throw new Error(`import answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as ImportAnswer;
}
