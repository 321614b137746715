import { type Json, obj, type ProviderProfile, str, yes } from "./profile";

/**
 * The providers of contract §7 as data: endpoints, default scopes, protocol features and how each one's profile
 * answer maps to a `ProviderProfile`. The protocol itself is one generic client (src/providers/client.ts); a
 * provider is only what differs. Every URL can be overridden per deployment (`AUTH_PROVIDER_<NAME>_…_URL`), which is
 * also how self-hosted GitLab or GitHub Enterprise are used; `{tenant}` is Microsoft's tenant.
 */
export const PROVIDER_NAMES = [
  "apple",
  "github",
  "google",
  "linkedin",
  "discord",
  "spotify",
  "twitch",
  "gitlab",
  "bitbucket",
  "workos",
  "azuread",
  "entraid",
  "strava",
  "facebook",
  "windowslive",
  "twitter",
] as const;

export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** What a mapping may read besides the userinfo answer. */
export interface ProfileSources {
  /** The userinfo (profile) answer, or `{}` for providers whose profile comes with the token. */
  userinfo: Json;
  /** The token endpoint's answer (WorkOS and Strava put the profile there). */
  token: Json;
  /** The validated ID token's claims, for OIDC providers. */
  idToken: Json;
  /** A second profile call some providers need (GitHub's and Bitbucket's email lists). */
  emails: unknown;
}

export interface ProviderDefinition {
  authorizationUrl: string;
  tokenUrl: string;
  /** The profile endpoint; absent when the profile comes with the token or the ID token. */
  userinfoUrl?: string;
  /** Where the verified email list is, derived from the profile endpoint's origin (contract §7 for GitHub). */
  emailsPath?: string;
  /** OIDC: the ID token is validated against these (issuer, JWKS) and carries a nonce. */
  oidc?: { issuer: string; jwksUrl: string };
  scopes: string[];
  /** How scopes are joined in the authorization URL (Strava wants commas). */
  scopeSeparator?: string;
  pkce: boolean;
  /** How the client secret reaches the token endpoint. */
  clientAuth: "basic" | "post";
  /** Fixed extra parameters of the authorization URL. */
  authorizationParams?: Record<string, string>;
  /** Headers the profile endpoint needs besides the bearer token (Twitch wants the client id). */
  userinfoHeaders?: (clientId: string) => Record<string, string>;
  profile(sources: ProfileSources): ProviderProfile | null;
}

/** GitHub and Bitbucket list addresses separately; the primary one counts only if the provider verified it. */
function primaryEmail(list: unknown, fields: { primary: string; verified: string; email: string }) {
  if (!Array.isArray(list)) return {};
  const primary = list.map(obj).find((entry) => entry[fields.primary] === true);
  return primary ? { email: str(primary[fields.email]), emailVerified: yes(primary[fields.verified]) } : {};
}

/** An OIDC provider's profile: the ID token first, the userinfo answer for what it leaves out. */
function oidcProfile(
  { idToken, userinfo }: ProfileSources,
  emailVerified?: (claims: Json) => boolean,
): ProviderProfile | null {
  const claims = { ...userinfo, ...idToken };
  const id = str(idToken.sub) ?? str(userinfo.sub);
  if (!id) return null;
  return {
    id,
    email: str(claims.email),
    emailVerified: emailVerified ? emailVerified(claims) : yes(claims.email_verified),
    displayName:
      str(claims.name) ?? [str(claims.given_name), str(claims.family_name)].filter(Boolean).join(" "),
    avatarUrl: str(claims.picture),
    locale: str(claims.locale),
  };
}

const microsoft: ProviderDefinition = {
  authorizationUrl: "https://login.microsoftonline.com/{tenant}/oauth2/v2.0/authorize",
  tokenUrl: "https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token",
  userinfoUrl: "https://graph.microsoft.com/oidc/userinfo",
  oidc: {
    issuer: "https://login.microsoftonline.com/{tenant}/v2.0",
    jwksUrl: "https://login.microsoftonline.com/{tenant}/discovery/v2.0/keys",
  },
  scopes: ["openid", "email", "profile"],
  pkce: true,
  clientAuth: "post",
  // Microsoft's `email` claim is whatever the tenant's admin typed: never treated as verified.
  profile: (sources) => oidcProfile(sources, () => false),
};

export const PROVIDERS: Record<ProviderName, ProviderDefinition> = {
  apple: {
    authorizationUrl: "https://appleid.apple.com/auth/authorize",
    tokenUrl: "https://appleid.apple.com/auth/token",
    oidc: { issuer: "https://appleid.apple.com", jwksUrl: "https://appleid.apple.com/auth/keys" },
    scopes: ["name", "email"],
    pkce: false,
    clientAuth: "post",
    // With name or email asked for, Apple answers by form_post (a POST to the callback).
    authorizationParams: { response_mode: "form_post" },
    profile: ({ idToken, userinfo }) => {
      const id = str(idToken.sub);
      if (!id) return null;
      // The name comes once, in the `user` field of the first form post, never in the ID token.
      const name = obj(userinfo.name);
      const displayName = [str(name.firstName), str(name.lastName)].filter(Boolean).join(" ");
      return { id, email: str(idToken.email), emailVerified: yes(idToken.email_verified), displayName };
    },
  },
  github: {
    authorizationUrl: "https://github.com/login/oauth/authorize",
    tokenUrl: "https://github.com/login/oauth/access_token",
    userinfoUrl: "https://api.github.com/user",
    emailsPath: "/user/emails",
    scopes: ["read:user", "user:email"],
    pkce: true,
    clientAuth: "post",
    profile: ({ userinfo, emails }) => {
      const id = str(userinfo.id);
      if (!id) return null;
      return {
        id,
        emailVerified: false,
        ...primaryEmail(emails, { primary: "primary", verified: "verified", email: "email" }),
        displayName: str(userinfo.name) ?? str(userinfo.login),
        avatarUrl: str(userinfo.avatar_url),
      };
    },
  },
  google: {
    authorizationUrl: "https://accounts.google.com/o/oauth2/v2/auth",
    tokenUrl: "https://oauth2.googleapis.com/token",
    userinfoUrl: "https://openidconnect.googleapis.com/v1/userinfo",
    oidc: { issuer: "https://accounts.google.com", jwksUrl: "https://www.googleapis.com/oauth2/v3/certs" },
    scopes: ["openid", "email", "profile"],
    pkce: true,
    clientAuth: "post",
    profile: (sources) => oidcProfile(sources),
  },
  linkedin: {
    authorizationUrl: "https://www.linkedin.com/oauth/v2/authorization",
    tokenUrl: "https://www.linkedin.com/oauth/v2/accessToken",
    userinfoUrl: "https://api.linkedin.com/v2/userinfo",
    oidc: { issuer: "https://www.linkedin.com/oauth", jwksUrl: "https://www.linkedin.com/oauth/openid/jwks" },
    scopes: ["openid", "profile", "email"],
    pkce: false,
    clientAuth: "post",
    profile: (sources) => oidcProfile(sources),
  },
  discord: {
    authorizationUrl: "https://discord.com/oauth2/authorize",
    tokenUrl: "https://discord.com/api/oauth2/token",
    userinfoUrl: "https://discord.com/api/users/@me",
    scopes: ["identify", "email"],
    pkce: true,
    clientAuth: "post",
    profile: ({ userinfo }) => {
      const id = str(userinfo.id);
      if (!id) return null;
      const avatar = str(userinfo.avatar);
      return {
        id,
        email: str(userinfo.email),
        emailVerified: yes(userinfo.verified),
        displayName: str(userinfo.global_name) ?? str(userinfo.username),
        avatarUrl: avatar ? `https://cdn.discordapp.com/avatars/${id}/${avatar}.png` : undefined,
        locale: str(userinfo.locale),
      };
    },
  },
  spotify: {
    authorizationUrl: "https://accounts.spotify.com/authorize",
    tokenUrl: "https://accounts.spotify.com/api/token",
    userinfoUrl: "https://api.spotify.com/v1/me",
    scopes: ["user-read-email"],
    pkce: true,
    clientAuth: "basic",
    // Spotify does not say whether it verified the address.
    profile: ({ userinfo }) => {
      const id = str(userinfo.id);
      if (!id) return null;
      const images = Array.isArray(userinfo.images) ? userinfo.images.map(obj) : [];
      return {
        id,
        email: str(userinfo.email),
        emailVerified: false,
        displayName: str(userinfo.display_name),
        avatarUrl: str(images[0]?.url),
      };
    },
  },
  twitch: {
    authorizationUrl: "https://id.twitch.tv/oauth2/authorize",
    tokenUrl: "https://id.twitch.tv/oauth2/token",
    userinfoUrl: "https://api.twitch.tv/helix/users",
    scopes: ["user:read:email"],
    pkce: false,
    clientAuth: "post",
    userinfoHeaders: (clientId) => ({ "Client-Id": clientId }),
    profile: ({ userinfo }) => {
      const data = Array.isArray(userinfo.data) ? obj(userinfo.data[0]) : {};
      const id = str(data.id);
      if (!id) return null;
      return {
        id,
        email: str(data.email),
        emailVerified: false,
        displayName: str(data.display_name) ?? str(data.login),
        avatarUrl: str(data.profile_image_url),
      };
    },
  },
  gitlab: {
    authorizationUrl: "https://gitlab.com/oauth/authorize",
    tokenUrl: "https://gitlab.com/oauth/token",
    userinfoUrl: "https://gitlab.com/api/v4/user",
    scopes: ["read_user"],
    pkce: true,
    clientAuth: "post",
    profile: ({ userinfo }) => {
      const id = str(userinfo.id);
      if (!id) return null;
      return {
        id,
        email: str(userinfo.email),
        // GitLab sets `confirmed_at` once the address is confirmed.
        emailVerified: typeof userinfo.confirmed_at === "string",
        displayName: str(userinfo.name) ?? str(userinfo.username),
        avatarUrl: str(userinfo.avatar_url),
        locale: str(userinfo.preferred_language),
      };
    },
  },
  bitbucket: {
    authorizationUrl: "https://bitbucket.org/site/oauth2/authorize",
    tokenUrl: "https://bitbucket.org/site/oauth2/access_token",
    userinfoUrl: "https://api.bitbucket.org/2.0/user",
    emailsPath: "/2.0/user/emails",
    scopes: ["account", "email"],
    pkce: false,
    clientAuth: "basic",
    profile: ({ userinfo, emails }) => {
      const id = str(userinfo.uuid) ?? str(userinfo.account_id);
      if (!id) return null;
      return {
        id,
        emailVerified: false,
        ...primaryEmail(obj(emails).values, {
          primary: "is_primary",
          verified: "is_confirmed",
          email: "email",
        }),
        displayName: str(userinfo.display_name),
        avatarUrl: str(obj(obj(userinfo.links).avatar).href),
      };
    },
  },
  workos: {
    authorizationUrl: "https://api.workos.com/sso/authorize",
    tokenUrl: "https://api.workos.com/sso/token",
    scopes: [],
    pkce: false,
    clientAuth: "post",
    // The profile comes with the token; its email is what the customer's identity provider asserted.
    profile: ({ token }) => {
      const profile = obj(token.profile);
      const id = str(profile.id);
      if (!id) return null;
      return {
        id,
        email: str(profile.email),
        emailVerified: false,
        displayName: [str(profile.first_name), str(profile.last_name)].filter(Boolean).join(" "),
      };
    },
  },
  azuread: microsoft,
  entraid: microsoft,
  strava: {
    authorizationUrl: "https://www.strava.com/oauth/authorize",
    tokenUrl: "https://www.strava.com/oauth/token",
    scopes: ["read"],
    scopeSeparator: ",",
    pkce: false,
    clientAuth: "post",
    // No email at all; the athlete comes with the token.
    profile: ({ token }) => {
      const athlete = obj(token.athlete);
      const id = str(athlete.id);
      if (!id) return null;
      return {
        id,
        emailVerified: false,
        displayName: [str(athlete.firstname), str(athlete.lastname)].filter(Boolean).join(" "),
        avatarUrl: str(athlete.profile),
      };
    },
  },
  facebook: {
    authorizationUrl: "https://www.facebook.com/v21.0/dialog/oauth",
    tokenUrl: "https://graph.facebook.com/v21.0/oauth/access_token",
    userinfoUrl: "https://graph.facebook.com/me?fields=id,name,email,picture",
    scopes: ["email", "public_profile"],
    pkce: true,
    clientAuth: "post",
    profile: ({ userinfo }) => {
      const id = str(userinfo.id);
      if (!id) return null;
      return {
        id,
        email: str(userinfo.email),
        emailVerified: false,
        displayName: str(userinfo.name),
        avatarUrl: str(obj(obj(userinfo.picture).data).url),
      };
    },
  },
  windowslive: {
    authorizationUrl: "https://login.live.com/oauth20_authorize.srf",
    tokenUrl: "https://login.live.com/oauth20_token.srf",
    userinfoUrl: "https://apis.live.net/v5.0/me",
    scopes: ["wl.basic", "wl.emails"],
    pkce: false,
    clientAuth: "post",
    profile: ({ userinfo }) => {
      const id = str(userinfo.id);
      if (!id) return null;
      const emails = obj(userinfo.emails);
      return {
        id,
        email: str(emails.preferred) ?? str(emails.account),
        emailVerified: false,
        displayName: str(userinfo.name),
        locale: str(userinfo.locale),
      };
    },
  },
  twitter: {
    authorizationUrl: "https://twitter.com/i/oauth2/authorize",
    tokenUrl: "https://api.twitter.com/2/oauth2/token",
    userinfoUrl: "https://api.twitter.com/2/users/me?user.fields=profile_image_url",
    scopes: ["users.read", "tweet.read", "offline.access"],
    pkce: true,
    clientAuth: "basic",
    // OAuth 2.0 at X gives no email.
    profile: ({ userinfo }) => {
      const data = obj(userinfo.data);
      const id = str(data.id);
      if (!id) return null;
      return {
        id,
        emailVerified: false,
        displayName: str(data.name) ?? str(data.username),
        avatarUrl: str(data.profile_image_url),
      };
    },
  },
};

export function isProviderName(value: string): value is ProviderName {
  return (PROVIDER_NAMES as readonly string[]).includes(value);
}
