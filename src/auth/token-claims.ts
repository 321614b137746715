import type { Config } from "../config";
import { UnavailableError } from "../errors";
import { customAccessTokenClaims } from "../hooks/custom-access-token";
import type { Deps } from "../http/deps";
import type { HasuraClaims } from "../signing-keys/jwt";
import { customClaimValues } from "./custom-claims";
import { ClaimsQueryFailed, queryUserClaims } from "./custom-claims-graphql";
import type { WireUserRow } from "./hot-queries";
import type { ActiveMembership } from "./org-membership";
import { builtInClaims, toWireUser, type WireUser } from "./users";

/**
 * The claims of a session's access token (contract §5.1, move-in §4): the built-in claims, the custom claims of
 * `AUTH_JWT_CUSTOM_CLAIMS`, and the caller's extra claims (the elevated claim). Custom claims come from the service's
 * own user, or, with `HASURA_GRAPHQL_GRAPHQL_URL`, from the app's data through one GraphQL query per token
 * (custom-claims-graphql.ts), encoded as Nhost encodes them (custom-claims.ts). They never overwrite a built-in claim.
 *
 * When the query fails, `AUTH_JWT_CUSTOM_CLAIMS_ON_ERROR` decides: `fail` (the default) refuses the token with 503
 * `service-unavailable` and nothing is issued; `omit` (Nhost's behaviour) issues it without custom claims and logs
 * why. Nothing a query answered is kept for a later token: a refresh right after the app changed a user's data
 * carries the change (docs/decisions.md, "Custom claims from the app's data (issue 30)").
 */

/**
 * Whether a token can be refused for want of its custom claims (the app's GraphQL API, or its CUSTOM_ACCESS_TOKEN
 * hook): a refresh then computes them before it rotates.
 */
export function claimsMayRefuse(config: Config): boolean {
  return (
    config.hooks.CUSTOM_ACCESS_TOKEN !== undefined ||
    (config.hasura.graphqlUrl !== undefined &&
      config.tokens.customClaimsOnError === "fail" &&
      Object.keys(config.tokens.customClaims).length > 0)
  );
}

/** What the services that sign access tokens need of the request; the hook also its audit log. */
type ClaimsDeps = Pick<Deps, "config" | "outbound"> & Partial<Pick<Deps, "audit">>;

/**
 * The custom part of `user`'s claims, `x-hasura-<name>` → encoded value, then, when the app's `CUSTOM_ACCESS_TOKEN`
 * hook is set (contract move-in §5.3), what the app answers for them: it sees the namespace as it would be signed and
 * its `{claims}` replace the custom part (built-in claims stay the service's: `accessTokenClaims`, and the hook's own
 * filter for the claims the service decides). Throws `UnavailableError` when the claims query or the hook fails.
 */
export async function customClaims(
  deps: ClaimsDeps,
  user: WireUserRow,
  /** How the session began, or `refresh` (the hook's `authenticationMethod`, contract move-in §5.3). */
  authenticationMethod: string,
  wire?: WireUser,
): Promise<HasuraClaims> {
  const configured = await configuredClaims(deps, user, wire);
  if (!deps.config.hooks.CUSTOM_ACCESS_TOKEN) return configured;
  const { audit } = deps;
  if (!audit) throw new Error("the CUSTOM_ACCESS_TOKEN hook is called with the request's audit log");
  return (await customAccessTokenClaims(
    { ...deps, audit },
    {
      userId: user.id,
      claims: { ...configured, ...builtInClaims(user) },
      authenticationMethod,
    },
  )) as HasuraClaims;
}

/**
 * The custom claims of `AUTH_JWT_CUSTOM_CLAIMS`, `x-hasura-<name>` → encoded value. Throws `UnavailableError` when
 * they come from the app's data, the query failed and the configuration says `fail`.
 */
async function configuredClaims(
  deps: Pick<Deps, "config" | "outbound">,
  user: WireUserRow,
  wire?: WireUser,
): Promise<HasuraClaims> {
  const { config } = deps;
  const paths = config.tokens.customClaims;
  const defaults = config.tokens.customClaimDefaults;
  if (Object.keys(paths).length === 0) return {};
  if (config.hasura.graphqlUrl === undefined) {
    return customClaimValues(paths, wire ?? toWireUser(user), defaults);
  }
  try {
    return customClaimValues(paths, await queryUserClaims(deps, user.id), defaults);
  } catch (error) {
    if (!(error instanceof ClaimsQueryFailed)) throw error;
    if (config.tokens.customClaimsOnError === "omit") {
      console.warn(
        JSON.stringify({
          level: "warn",
          what: "custom-claims-omitted",
          userId: user.id,
          detail: error.message,
        }),
      );
      return {};
    }
    throw new UnavailableError(error.message);
  }
}

/**
 * Every claim of the access token about to be signed for `user`. `custom`: the custom part computed a moment before
 * (`beforeRotation` in sessions/before-rotation.ts, or before a sign-in wrote its session), so that a refusal comes before anything changed.
 */
export async function accessTokenClaims(
  deps: ClaimsDeps,
  user: WireUserRow,
  extraClaims: HasuraClaims = {},
  wire: WireUser = toWireUser(user),
  custom?: HasuraClaims,
  /** The session's organization, when it acts in one (contract organizations.md §1). */
  org?: ActiveMembership,
  /** For the custom-access-token hook when `custom` was not computed before: how the token came to be. */
  authenticationMethod = "refresh",
): Promise<HasuraClaims> {
  const claims = builtInClaims(user, org);
  for (const [name, value] of Object.entries(
    custom ?? (await customClaims(deps, user, authenticationMethod, wire)),
  )) {
    if (!Object.hasOwn(claims, name)) claims[name] = value;
  }
  return { ...claims, ...extraClaims };
}
