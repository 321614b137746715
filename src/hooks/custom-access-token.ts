import { callHook, type HookDeps, MalformedHookAnswer } from "./call";

/**
 * Claims of the namespace the app's `CUSTOM_ACCESS_TOKEN` hook cannot set: the built-in ones and those the service
 * decides itself (the role a request asks for, the elevation a security key proved). An answer naming one is heard
 * without it; the token's own `sub`, `iat`, `exp` and `iss` are outside the namespace and outside the hook's reach.
 */
const SERVICE_CLAIMS = new Set([
  "x-hasura-user-id",
  "x-hasura-default-role",
  "x-hasura-allowed-roles",
  "x-hasura-user-is-anonymous",
  "x-hasura-auth-elevated",
  "x-hasura-role",
  // Reserved for organisations (contract organizations.md), as AUTH_JWT_CUSTOM_CLAIMS reserves them (config.ts).
  "x-hasura-org-id",
  "x-hasura-org-role",
]);

export interface AccessTokenHookInput {
  userId: string;
  /** The namespace's claims as the service would sign them: built-in and configured custom claims. */
  claims: Record<string, unknown>;
  /** How the session was started, or `refresh` for a token of a renewed session. */
  authenticationMethod: string;
}

/**
 * `CUSTOM_ACCESS_TOKEN` (contract move-in §5.3): before an access token is signed, the app gets
 * `{userId, claims, authenticationMethod}` and answers `{claims}`, which becomes the namespace's custom part (the
 * caller keeps the built-in claims over it). No answer, or not an object of claims: 503 and no token (call.ts).
 */
export async function customAccessTokenClaims(
  deps: HookDeps,
  input: AccessTokenHookInput,
): Promise<Record<string, unknown>> {
  return callHook(
    deps,
    "CUSTOM_ACCESS_TOKEN",
    input,
    ({ body }) => {
      const claims = (body as { claims?: unknown } | undefined)?.claims;
      if (typeof claims !== "object" || claims === null || Array.isArray(claims)) {
        throw new MalformedHookAnswer('no "claims" object');
      }
      const custom: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(claims)) {
        if (!SERVICE_CLAIMS.has(name.toLowerCase()) && value !== undefined) custom[name] = value;
      }
      return { outcome: "claims", value: custom };
    },
    input.userId,
  );
}
