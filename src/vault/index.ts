/**
 * What the rest of the service may use of the token vault (contract operators.md §3): the token exchange asks it
 * for a provider's token (src/oauth2/vault-exchange.ts); the account center lists the user's connections.
 */
export { type Refusal, type Release, releaseProviderToken } from "./release";
export { type ConnectionView, connectionsOf } from "./store";
