import type { UserRow } from "../db/schema";

/**
 * The signed-in person as the browser's prompt shows them (W3C FedCM § Accounts endpoint, IdentityProviderAccount):
 * `id` is the user's id, which the ID assertion request names back (`account_id`) and the code's `sub` will be. At
 * least one of name, email, username or tel must be there: a user with no display name shows their email, or their
 * phone number. `approved_clients`: the clients they consented to, so the browser treats them as returning users
 * (no disclosure text) for those.
 */
export function accountOf(user: UserRow, approvedClients: string[]) {
  const email = user.email ?? undefined;
  const name = user.displayName || email || user.phoneNumber || user.id;
  return {
    id: user.id,
    name,
    ...(email ? { email } : {}),
    ...(user.phoneNumber ? { tel: user.phoneNumber } : {}),
    ...(user.avatarUrl ? { picture: user.avatarUrl } : {}),
    approved_clients: approvedClients,
    // An RP's `loginHint` matches the address; its `domainHint` the address's domain (a workforce app's filter).
    ...(email ? { login_hints: [email], domain_hints: [email.slice(email.lastIndexOf("@") + 1)] } : {}),
  };
}
