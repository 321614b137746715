/**
 * What the rest of the service may use of the external providers (contract §7): the account center's linked
 * providers (src/account-center/security/) lists, unlinks and links another with the flow's own steps. The routes
 * are mounted from its feature.ts; everything else in src/providers/ is internal to it.
 */
export {
  identitiesOf,
  identitiesOfUser,
  identitiesRead,
  type LinkedIdentity,
  unlinkIdentity,
} from "./accounts";
// The Supabase face's `/authorize` and `/user/identities/authorize` start the same flow with a `CodeReturn`; its link,
// and the vault's connection, ask the person first as `connect` does.
export { answerOperation, askFirst, followAnswer, goOrAsk } from "./ask-first";
export { ProviderStepError, type TokenSet } from "./client";
// The token vault (src/vault/) connects accounts through the same requests, exchange and profile (connections.ts).
export {
  type ConnectionOutcome,
  claimConnection,
  finishConnection,
  openConnection,
  refreshConnection,
  revokeConnection,
} from "./connections";
export { type CodeReturn, REQUEST_LIFETIME_MS, startProviderSignIn, takeProviderTokens } from "./flow";
// The Supabase face's `grant_type=id_token` (src/faces/supabase/) signs in as `/signin/idtoken` does.
export { signInByIdToken } from "./id-token-sign-in";
export { isProviderName, PROVIDER_NAMES, type ProviderName } from "./registry";
