import { ConfigError } from "../errors";
import { PROVIDER_NAMES, PROVIDERS, type ProviderDefinition, type ProviderName } from "./registry";

/**
 * The external providers a deployment switched on (contract §7), each with its credentials and its endpoints after
 * the overrides (`AUTH_PROVIDER_<NAME>_AUTHORIZATION_URL`, `_TOKEN_URL`, `_USERINFO_URL`, `_JWKS_URL`, `_ISSUER`).
 * A switched-on provider without its credentials, or a URL that is not a URL, stops the service at start with a
 * message naming the variable, like every other setting.
 */
export interface ProviderSettings {
  /** A built-in provider's name, or a custom provider's id (`AUTH_CUSTOM_PROVIDERS`, ./custom-config.ts). */
  name: ProviderName | (string & {});
  definition: ProviderDefinition;
  clientId: string;
  /** Absent for Apple, whose secret is a JWT made from `apple` below. */
  clientSecret?: string;
  scopes: string[];
  authorizationUrl: string;
  tokenUrl: string;
  userinfoUrl?: string;
  oidc?: { issuer: string; jwksUrl: string };
  /** Apple's client secret is an ES256 JWT signed with this key (contract §7: team id, key id, private key). */
  apple?: { teamId: string; keyId: string; privateKey: string };
  /** WorkOS: which connection or organization signs people in, unless the app's request names one. */
  workos?: { connection?: string; organization?: string };
  /** A provider of `AUTH_CUSTOM_PROVIDERS`: its display name, and whether its endpoints come from discovery. */
  custom?: CustomProvider;
  /** A custom OIDC provider's ID token signature check, set at sign-in (./custom-endpoints.ts). */
  checkIdToken?: (idToken: string) => Promise<void>;
}

/** What a custom provider (`AUTH_CUSTOM_PROVIDERS`, ./custom-config.ts) needs at sign-in besides the rest. */
export interface CustomProvider {
  /** Display name for the pages' buttons and the account center. */
  name: string;
  /** Endpoints come from the issuer's discovery document at sign-in. */
  discover: boolean;
  issuer?: string;
  /** A userinfo endpoint set in configuration, which wins over the discovered one. */
  userinfoUrl?: string;
}

export interface ProvidersConfig {
  /** Providers switched on for the redirect flow: the built-in ones by name, the custom ones by id. */
  enabled: Record<string, ProviderSettings>;
  /** ID-token sign-in (`/signin/idtoken`): on for a provider once `AUTH_PROVIDER_<P>_AUDIENCE` is set. */
  idTokens: Partial<Record<IdTokenProvider, IdTokenSettings>>;
}

export type IdTokenProvider = "apple" | "google";

export interface IdTokenSettings {
  /** The client ids a token may be for (a comma list: an iOS app's and a web app's differ). */
  audiences: string[];
  issuers: string[];
  jwksUrl: string;
  /**
   * `AUTH_PROVIDER_<P>_ID_TOKEN_NONCE_REQUIRED`: a token is accepted only with the nonce the app sends, so a token
   * captured from another app or another sign-in cannot be replayed here (OIDC Core §3.1.2.1). Off by default: apps
   * that do not send a nonce keep working.
   */
  nonceRequired: boolean;
}

/** Google writes its issuer both ways (its documentation says so). */
const ID_TOKEN_ISSUERS: Record<IdTokenProvider, string[]> = {
  apple: ["https://appleid.apple.com"],
  google: ["https://accounts.google.com", "accounts.google.com"],
};

type Env = Record<string, unknown>;

function read(env: Env, name: string): string | undefined {
  const value = env[name];
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

function readUrl(env: Env, name: string, fallback: string): string {
  const value = read(env, name) ?? fallback;
  try {
    const url = new URL(value);
    // Plain http only on loopback: a fake provider in tests, a local identity server in development.
    const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
    if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) throw new Error();
  } catch {
    throw new ConfigError(`invalid configuration: ${name} must be an https URL (http only on loopback)`);
  }
  return value;
}

const list = (value: string | undefined) => (value ? value.split(/[\s,]+/).filter(Boolean) : undefined);

function settingsFor(env: Env, name: ProviderName): ProviderSettings {
  const key = (suffix: string) => `AUTH_PROVIDER_${name.toUpperCase()}_${suffix}`;
  const definition = PROVIDERS[name];
  const clientId = read(env, key("CLIENT_ID"));
  if (!clientId)
    throw new ConfigError(`invalid configuration: ${key("CLIENT_ID")} must be set with ${key("ENABLED")}`);
  const tenant = encodeURIComponent(read(env, key("TENANT")) ?? "common");
  const withTenant = (url: string) => url.replaceAll("{tenant}", tenant);
  let apple: ProviderSettings["apple"];
  const clientSecret = read(env, key("CLIENT_SECRET"));
  if (name === "apple") {
    const [teamId, keyId, privateKey] = [
      read(env, key("TEAM_ID")),
      read(env, key("KEY_ID")),
      read(env, key("PRIVATE_KEY")),
    ];
    if (!teamId || !keyId || !privateKey) {
      throw new ConfigError(
        `invalid configuration: ${key("TEAM_ID")}, ${key("KEY_ID")} and ${key("PRIVATE_KEY")} must be set with ${key("ENABLED")}`,
      );
    }
    apple = { teamId, keyId, privateKey: privateKey.replace(/\\n/g, "\n") };
  } else if (!clientSecret) {
    throw new ConfigError(
      `invalid configuration: ${key("CLIENT_SECRET")} must be set with ${key("ENABLED")}`,
    );
  }
  // A provider whose profile comes with the token has no profile endpoint unless one is configured.
  const hasUserinfo = definition.userinfoUrl !== undefined || read(env, key("USERINFO_URL")) !== undefined;
  return {
    name,
    definition,
    clientId,
    clientSecret,
    scopes: list(read(env, key("SCOPE"))) ?? definition.scopes,
    authorizationUrl: readUrl(env, key("AUTHORIZATION_URL"), withTenant(definition.authorizationUrl)),
    tokenUrl: readUrl(env, key("TOKEN_URL"), withTenant(definition.tokenUrl)),
    userinfoUrl: hasUserinfo
      ? readUrl(env, key("USERINFO_URL"), withTenant(definition.userinfoUrl ?? ""))
      : undefined,
    oidc: definition.oidc && {
      issuer: read(env, key("ISSUER")) ?? withTenant(definition.oidc.issuer),
      jwksUrl: readUrl(env, key("JWKS_URL"), withTenant(definition.oidc.jwksUrl)),
    },
    apple,
    workos:
      name === "workos"
        ? { connection: read(env, key("CONNECTION")), organization: read(env, key("ORGANIZATION")) }
        : undefined,
  };
}

export function parseProviders(env: Env): ProvidersConfig {
  const enabled: ProvidersConfig["enabled"] = {};
  for (const name of PROVIDER_NAMES) {
    const flag = read(env, `AUTH_PROVIDER_${name.toUpperCase()}_ENABLED`);
    if (flag === "true" || flag === "1") enabled[name] = settingsFor(env, name);
  }
  const idTokens: ProvidersConfig["idTokens"] = {};
  for (const name of ["apple", "google"] as const) {
    const key = (suffix: string) => `AUTH_PROVIDER_${name.toUpperCase()}_${suffix}`;
    const audiences = list(read(env, key("AUDIENCE")));
    if (!audiences) continue;
    const issuer = read(env, key("ISSUER"));
    idTokens[name] = {
      audiences,
      issuers: issuer ? [issuer] : ID_TOKEN_ISSUERS[name],
      jwksUrl: readUrl(env, key("JWKS_URL"), PROVIDERS[name].oidc!.jwksUrl),
      nonceRequired: ["true", "1"].includes(read(env, key("ID_TOKEN_NONCE_REQUIRED")) ?? ""),
    };
  }
  return { enabled, idTokens };
}
