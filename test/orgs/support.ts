// What the organization tests share: the service, users with sessions, organizations and memberships made through
// the HTTP surface (the admin API where a test needs a state quickly), and the mailed invitation ticket.
import { env } from "cloudflare:test";
import { expect } from "vitest";
import {
  decodeJwt,
  mailbox,
  NO_VERIFICATION,
  service,
  signUp,
  uniqueEmail,
  type WireSession,
} from "../helpers";

export const svc = service(NO_VERIFICATION);
export const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };

export const admin = (method: string, path: string, json?: unknown) =>
  svc.request(method, `/admin${path}`, { headers: ADMIN, json });

export const as = (token: string | undefined, method: string, path: string, json?: unknown) =>
  svc.request(method, path, { token, json });

export interface Org {
  id: string;
  name: string;
  slug: string;
}

/** A new user with a session; `verified`: its email marked verified (what accepting an invitation needs). */
export async function user(tag = "org", verified = false): Promise<WireSession> {
  const session = await signUp(svc, uniqueEmail(tag));
  if (verified) {
    const response = await admin("PATCH", `/users/${session.user.id}`, { emailVerified: true });
    expect(response.status).toBe(200);
  }
  return session;
}

export async function createOrg(owner: WireSession, name = `Acme ${crypto.randomUUID().slice(0, 6)}`) {
  const response = await as(owner.accessToken, "POST", "/orgs", { name });
  expect(response.status).toBe(201);
  return (await response.json()) as Org;
}

/** Makes `member` a member of `org` with `role`, through the admin API. */
export async function addMember(org: Org, member: WireSession, role: string): Promise<void> {
  const response = await admin("POST", `/orgs/${org.id}/members`, { userId: member.user.id, role });
  expect(response.status).toBe(201);
}

/** A refresh, optionally switching (`orgId`), that must succeed. */
export async function refresh(session: WireSession, orgId?: string | null): Promise<WireSession> {
  const response = await svc.post("/token", {
    refreshToken: session.refreshToken,
    ...(orgId === undefined ? {} : { orgId }),
  });
  if (response.status !== 200) throw new Error(`refresh: ${response.status} ${await response.text()}`);
  return (await response.json()) as WireSession;
}

const HASURA = "https://hasura.io/jwt/claims";

/** The org claims of an access token: top-level `org_id` and the Hasura namespace's two. */
export function orgClaims(accessToken: string) {
  const { payload } = decodeJwt(accessToken);
  const hasura = payload[HASURA] as Record<string, unknown>;
  return {
    orgId: payload.org_id,
    hasuraOrgId: hasura["x-hasura-org-id"],
    hasuraOrgRole: hasura["x-hasura-org-role"],
  };
}

/** The ticket of the newest invitation mail to `email`. */
export async function invitationTicket(email: string): Promise<string> {
  const [mail] = await mailbox(svc, email);
  if (!mail) throw new Error(`no mail to ${email}`);
  const link = /(http\S+[?&]ticket=\S+)/.exec(mail.text)?.[1];
  if (!link) throw new Error(`no invitation link in: ${mail.text}`);
  return new URL(link).searchParams.get("ticket")!;
}
