import type { WireUser } from "../../../auth";
import type { LinkedIdentity } from "../../../providers";

/**
 * GoTrue's identities (internal/models/identity.go: `identity_id` is the row, `id` the provider's subject), shaped
 * from the core's linked providers (src/providers/accounts.ts). An account with an email also lists GoTrue's `email`
 * identity, as GoTrue makes one for every email sign-up (apps read `identities.length`); its ids are the user's, and
 * it is the address itself, so it is not unlinked (identity-routes.ts).
 */

export interface GoTrueIdentity {
  id: string;
  identity_id: string;
  user_id: string;
  identity_data: Record<string, unknown>;
  provider: string;
  created_at: string;
  updated_at: string;
  email?: string;
}

export function goTrueIdentities(user: WireUser, linked: readonly LinkedIdentity[]): GoTrueIdentity[] {
  const email: GoTrueIdentity[] =
    user.email && !user.isAnonymous
      ? [
          {
            id: user.id,
            identity_id: user.id,
            user_id: user.id,
            identity_data: {
              sub: user.id,
              email: user.email,
              email_verified: user.emailVerified,
              phone_verified: false,
            },
            provider: "email",
            created_at: user.createdAt,
            updated_at: user.createdAt,
            email: user.email,
          },
        ]
      : [];
  return [
    ...email,
    ...linked.map((identity) => {
      const at = new Date(identity.createdAt).toISOString();
      return {
        id: identity.providerUserId,
        identity_id: identity.id,
        user_id: user.id,
        identity_data: { sub: identity.providerUserId, provider_id: identity.providerUserId },
        provider: identity.provider,
        created_at: at,
        updated_at: at,
      };
    }),
  ];
}
