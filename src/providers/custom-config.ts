import { z } from "zod";
import { ConfigError } from "../errors";
import { describeIssues } from "../http/validation";
import type { ProviderSettings } from "./config";
import { obj, type ProviderProfile, str, yes } from "./profile";
import { PROVIDER_NAMES, type ProviderDefinition } from "./registry";

/**
 * `AUTH_CUSTOM_PROVIDERS` (issue 47): any OpenID Connect or plain OAuth 2.0 provider as configuration, turned into
 * the same `ProviderSettings` the sixteen built-in providers have (src/providers/config.ts), so the redirect flow,
 * linking, the provider's tokens, the account center and the hosted pages' buttons take it as they take GitHub.
 * Read once at start: a bad list stops the service with a message naming the variable. Discovery (an `issuer` alone)
 * happens at the first sign-in, under the outbound-URL policy (./custom-endpoints.ts).
 */

const VARIABLE = "AUTH_CUSTOM_PROVIDERS";

/** A dotted path into a JSON answer (`sub`, `data.0.id`, `emails.primary`). */
const path = z.string().regex(/^[A-Za-z0-9_:$-]+(\.[A-Za-z0-9_:$-]+){0,5}$/, "a dotted claim path");
const url = z.url().max(2048);
const scope = z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, "a scope token");

const entrySchema = z.strictObject({
  id: z
    .string()
    .regex(/^[a-z][a-z0-9]{1,30}$/, "2 to 31 lower-case letters and digits, starting with a letter")
    .refine((id) => !(PROVIDER_NAMES as readonly string[]).includes(id), "a built-in provider's name"),
  name: z.string().trim().min(1).max(60),
  issuer: url.optional(),
  authorizationUrl: url.optional(),
  tokenUrl: url.optional(),
  userinfoUrl: url.optional(),
  jwksUrl: url.optional(),
  scopes: z.array(scope).max(20).optional(),
  pkce: z.boolean().default(true),
  /** How the client secret reaches the token endpoint (RFC 6749 §2.3.1: Basic is the one every server supports). */
  clientAuth: z.enum(["basic", "post"]).default("basic"),
  claims: z
    .strictObject({
      id: path.optional(),
      email: path.optional(),
      verified: path.optional(),
      name: path.optional(),
      picture: path.optional(),
    })
    .default({}),
  /** Where in the userinfo answer the person is (`data.0` for an API that wraps it), before the claim paths. */
  userinfoPath: path.optional(),
});

export type CustomProviderEntry = z.infer<typeof entrySchema>;

const listSchema = z
  .array(entrySchema)
  .max(20)
  .refine((list) => new Set(list.map((entry) => entry.id)).size === list.length, "two providers with one id");

/** A value at a dotted path: `data.0.id` reads arrays by index. */
function at(source: unknown, dotted: string | undefined): unknown {
  if (!dotted) return undefined;
  let value = source;
  for (const key of dotted.split(".")) {
    if (Array.isArray(value) && /^\d+$/.test(key)) value = value[Number(key)];
    else value = obj(value)[key];
  }
  return value;
}

/**
 * The mapping as a profile function: the ID token's claims first (checked), the userinfo answer for what it leaves
 * out. Without a `verified` mapping the address is never verified, so it never finds an existing account by email.
 */
function profileOf(entry: CustomProviderEntry, oidc: boolean): ProviderDefinition["profile"] {
  const claims = {
    id: entry.claims.id ?? (oidc ? "sub" : "id"),
    email: entry.claims.email ?? "email",
    name: entry.claims.name ?? "name",
    picture: entry.claims.picture ?? "picture",
  };
  return ({ idToken, userinfo }): ProviderProfile | null => {
    const person = entry.userinfoPath ? obj(at(userinfo, entry.userinfoPath)) : userinfo;
    const read = (dotted: string | undefined) => at(idToken, dotted) ?? at(person, dotted);
    const id = str(read(claims.id));
    if (!id) return null;
    return {
      id,
      email: str(read(claims.email)),
      emailVerified: entry.claims.verified ? yes(read(entry.claims.verified)) : false,
      displayName: str(read(claims.name)),
      avatarUrl: str(read(claims.picture)),
    };
  };
}

function isLoopbackOrHttps(value: string): boolean {
  const parsed = new URL(value);
  const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(parsed.hostname);
  return parsed.protocol === "https:" || (parsed.protocol === "http:" && loopback);
}

function settingsOf(env: Record<string, unknown>, entry: CustomProviderEntry): ProviderSettings {
  const at = `${VARIABLE}: ${entry.id}`;
  const fail = (message: string) => new ConfigError(`invalid configuration: ${message}`);
  for (const field of ["issuer", "authorizationUrl", "tokenUrl", "userinfoUrl", "jwksUrl"] as const) {
    const value = entry[field];
    if (value && !isLoopbackOrHttps(value))
      throw fail(`${at}: ${field} must be https (http only on loopback)`);
  }
  const explicit = entry.authorizationUrl !== undefined || entry.tokenUrl !== undefined;
  if (explicit && !(entry.authorizationUrl && entry.tokenUrl)) {
    throw fail(`${at}: authorizationUrl and tokenUrl go together`);
  }
  if (!explicit && !entry.issuer)
    throw fail(`${at}: an issuer (with discovery) or authorizationUrl and tokenUrl`);
  // Explicit endpoints are OIDC when an issuer is named (its ID token checked against jwksUrl), else plain OAuth 2.0.
  if (explicit && entry.issuer && !entry.jwksUrl)
    throw fail(`${at}: an issuer without discovery needs jwksUrl`);
  if (explicit && !entry.issuer && entry.jwksUrl) throw fail(`${at}: jwksUrl needs the issuer it checks`);
  const oidc = entry.issuer !== undefined;
  if (!oidc && !entry.userinfoUrl) throw fail(`${at}: a plain OAuth 2.0 provider needs userinfoUrl`);
  const key = (suffix: string) => `AUTH_PROVIDER_${entry.id.toUpperCase()}_${suffix}`;
  const read = (name: string) => {
    const value = env[name];
    return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
  };
  const clientId = read(key("CLIENT_ID"));
  const clientSecret = read(key("CLIENT_SECRET"));
  if (!clientId || !clientSecret) {
    throw fail(`${key("CLIENT_ID")} and ${key("CLIENT_SECRET")} must be set for ${VARIABLE}'s ${entry.id}`);
  }
  const scopes = entry.scopes ?? (oidc ? ["openid", "email", "profile"] : []);
  if (oidc && !scopes.includes("openid"))
    throw fail(`${at}: an OpenID Connect provider's scopes need openid`);
  const definition: ProviderDefinition = {
    authorizationUrl: entry.authorizationUrl ?? "",
    tokenUrl: entry.tokenUrl ?? "",
    userinfoUrl: entry.userinfoUrl,
    scopes,
    pkce: entry.pkce,
    clientAuth: entry.clientAuth,
    profile: profileOf(entry, oidc),
  };
  return {
    name: entry.id,
    definition,
    clientId,
    clientSecret,
    scopes,
    // With discovery these are filled at sign-in; until then the issuer stands for the provider's origin (the pages'
    // CSP form-action lists it).
    authorizationUrl: entry.authorizationUrl ?? entry.issuer!,
    tokenUrl: entry.tokenUrl ?? entry.issuer!,
    userinfoUrl: entry.userinfoUrl,
    oidc: oidc ? { issuer: entry.issuer!, jwksUrl: entry.jwksUrl ?? "" } : undefined,
    custom: {
      name: entry.name,
      discover: !explicit,
      issuer: entry.issuer,
      userinfoUrl: entry.userinfoUrl,
    },
  };
}

/** The configured custom providers by id; none when the variable is unset. */
export function parseCustomProviders(env: Record<string, unknown>): Record<string, ProviderSettings> {
  const raw = env[VARIABLE];
  if (typeof raw !== "string" || raw.trim() === "") return {};
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new ConfigError(`invalid configuration: ${VARIABLE} must be a JSON list`);
  }
  const parsed = listSchema.safeParse(json);
  if (!parsed.success) {
    throw new ConfigError(`invalid configuration: ${VARIABLE}: ${describeIssues(parsed.error.issues)}`);
  }
  return Object.fromEntries(parsed.data.map((entry) => [entry.id, settingsOf(env, entry)]));
}
