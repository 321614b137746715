import type { Session, WireUser } from "../../../auth";
import type { LinkedIdentity } from "../../../providers";
import { goTrueIdentities } from "./identities";
import { AUDIENCE, providerOf } from "./user-facts";

/**
 * GoTrue's user and session objects (contract supabase.md §2), shaped from the core's. One account, two faces:
 * `user_metadata` is the Nhost `metadata`, with `full_name` and `avatar_url` from the Nhost profile when absent there.
 * The service records that an address is confirmed, not when: a confirmed address's `*_confirmed_at` is the account's
 * creation (docs/supabase.md says so).
 */

export interface GoTrueUser {
  id: string;
  aud: string;
  role: string;
  email: string;
  email_confirmed_at?: string;
  phone: string;
  phone_confirmed_at?: string;
  confirmed_at?: string;
  last_sign_in_at?: string;
  app_metadata: Record<string, unknown>;
  user_metadata: Record<string, unknown>;
  identities: unknown[];
  is_anonymous: boolean;
  created_at: string;
  updated_at: string;
}

export function goTrueUser(
  user: WireUser,
  {
    signedInAt,
    identities = [],
    appMetadata,
  }: {
    signedInAt?: string;
    identities?: readonly LinkedIdentity[];
    /** What the service role set (users.app_metadata); `provider` and `providers` are the service's own. */
    appMetadata?: Record<string, unknown> | null;
  } = {},
): GoTrueUser {
  const provider = providerOf(user);
  const providers = [...new Set([provider, ...identities.map((identity) => identity.provider)])];
  const emailConfirmed = user.email && user.emailVerified ? user.createdAt : undefined;
  const phoneConfirmed = user.phoneNumber && user.phoneNumberVerified ? user.createdAt : undefined;
  const profile = {
    ...(user.displayName && user.displayName !== user.email ? { full_name: user.displayName } : {}),
    ...(user.avatarUrl ? { avatar_url: user.avatarUrl } : {}),
  };
  return {
    id: user.id,
    aud: AUDIENCE,
    role: AUDIENCE,
    email: user.email ?? "",
    ...(emailConfirmed ? { email_confirmed_at: emailConfirmed } : {}),
    phone: user.phoneNumber?.replace(/^\+/, "") ?? "",
    ...(phoneConfirmed ? { phone_confirmed_at: phoneConfirmed } : {}),
    ...(emailConfirmed || phoneConfirmed ? { confirmed_at: emailConfirmed ?? phoneConfirmed } : {}),
    ...(signedInAt ? { last_sign_in_at: signedInAt } : {}),
    app_metadata: { ...appMetadata, provider, providers },
    user_metadata: { ...profile, ...user.metadata },
    identities: goTrueIdentities(user, identities),
    is_anonymous: user.isAnonymous,
    created_at: user.createdAt,
    updated_at: user.createdAt,
  };
}

export interface GoTrueSession {
  access_token: string;
  token_type: "bearer";
  expires_in: number;
  expires_at: number;
  refresh_token: string;
  user: GoTrueUser;
}

export function goTrueSession(
  session: Session,
  now: number,
  identities?: readonly LinkedIdentity[],
): GoTrueSession {
  return {
    access_token: session.accessToken,
    token_type: "bearer",
    expires_in: session.accessTokenExpiresIn,
    expires_at: Math.floor(now / 1000) + session.accessTokenExpiresIn,
    refresh_token: session.refreshToken,
    user: goTrueUser(session.user, { signedInAt: new Date(now).toISOString(), identities }),
  };
}
