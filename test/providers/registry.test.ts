// Each of the 16 providers: the authorization URL the service sends the browser to, and the profile mapping applied
// to a sample answer of that provider's API (shapes from each provider's API documentation).
import { describe, expect, it } from "vitest";
import {
  PROVIDER_NAMES,
  PROVIDERS,
  type ProfileSources,
  type ProviderName,
} from "../../src/providers/registry";
import { service } from "../helpers";
import { APP, location } from "./support";

const credentials: Record<string, string> = {};
for (const name of PROVIDER_NAMES) {
  const key = (suffix: string) => `AUTH_PROVIDER_${name.toUpperCase()}_${suffix}`;
  credentials[key("ENABLED")] = "true";
  credentials[key("CLIENT_ID")] = `${name}-id`;
  credentials[key("CLIENT_SECRET")] = `${name}-secret`;
}
Object.assign(credentials, {
  AUTH_PROVIDER_APPLE_TEAM_ID: "TEAM123456",
  AUTH_PROVIDER_APPLE_KEY_ID: "KEY1234567",
  AUTH_PROVIDER_APPLE_PRIVATE_KEY: "-----BEGIN PRIVATE KEY-----\\nMIGH\\n-----END PRIVATE KEY-----",
  AUTH_PROVIDER_AZUREAD_TENANT: "contoso.onmicrosoft.com",
  AUTH_PROVIDER_WORKOS_CONNECTION: "conn_123",
  AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS: "https://app.example.com",
});
const svc = service(credentials);

/** Where each provider's authorization endpoint is, its default scope, and whether PKCE and a nonce are sent. */
const AUTHORIZE: Record<ProviderName, [string, string | null, boolean, boolean]> = {
  apple: ["https://appleid.apple.com/auth/authorize", "name email", false, true],
  github: ["https://github.com/login/oauth/authorize", "read:user user:email", true, false],
  google: ["https://accounts.google.com/o/oauth2/v2/auth", "openid email profile", true, true],
  linkedin: ["https://www.linkedin.com/oauth/v2/authorization", "openid profile email", false, true],
  discord: ["https://discord.com/oauth2/authorize", "identify email", true, false],
  spotify: ["https://accounts.spotify.com/authorize", "user-read-email", true, false],
  twitch: ["https://id.twitch.tv/oauth2/authorize", "user:read:email", false, false],
  gitlab: ["https://gitlab.com/oauth/authorize", "read_user", true, false],
  bitbucket: ["https://bitbucket.org/site/oauth2/authorize", "account email", false, false],
  workos: ["https://api.workos.com/sso/authorize", null, false, false],
  azuread: [
    "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize",
    "openid email profile",
    true,
    true,
  ],
  entraid: [
    "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
    "openid email profile",
    true,
    true,
  ],
  strava: ["https://www.strava.com/oauth/authorize", "read", false, false],
  facebook: ["https://www.facebook.com/v21.0/dialog/oauth", "email public_profile", true, false],
  windowslive: ["https://login.live.com/oauth20_authorize.srf", "wl.basic wl.emails", false, false],
  twitter: ["https://twitter.com/i/oauth2/authorize", "users.read tweet.read offline.access", true, false],
};

describe("authorization URLs", () => {
  for (const name of PROVIDER_NAMES) {
    it(`${name}`, async () => {
      const url = location(await svc.get(`/signin/provider/${name}?redirectTo=${encodeURIComponent(APP)}`));
      const [endpoint, scope, pkce, nonce] = AUTHORIZE[name];
      expect(`${url.origin}${url.pathname}`).toBe(endpoint);
      expect(url.searchParams.get("client_id")).toBe(`${name}-id`);
      expect(url.searchParams.get("redirect_uri")).toBe(
        `http://localhost:8787/auth/v1/signin/provider/${name}/callback`,
      );
      expect(url.searchParams.get("scope")).toBe(scope);
      expect(url.searchParams.has("code_challenge")).toBe(pkce);
      expect(url.searchParams.has("nonce")).toBe(nonce);
      if (name === "apple") expect(url.searchParams.get("response_mode")).toBe("form_post");
      if (name === "workos") expect(url.searchParams.get("connection")).toBe("conn_123");
    });
  }
});

const none: ProfileSources = { userinfo: {}, token: {}, idToken: {}, emails: undefined };

/** A sample answer of each provider and the profile it must give. */
const SAMPLES: Record<ProviderName, [Partial<ProfileSources>, object]> = {
  apple: [
    {
      idToken: { sub: "001234.abc", email: "a@privaterelay.appleid.com", email_verified: "true" },
      userinfo: { name: { firstName: "Ada", lastName: "Lovelace" } },
    },
    {
      id: "001234.abc",
      email: "a@privaterelay.appleid.com",
      emailVerified: true,
      displayName: "Ada Lovelace",
    },
  ],
  github: [
    {
      userinfo: {
        login: "octocat",
        id: 1,
        avatar_url: "https://github.com/images/error/octocat_happy.gif",
        name: "monalisa octocat",
      },
      emails: [
        { email: "octocat@github.com", verified: true, primary: true, visibility: "public" },
        { email: "other@example.com", verified: false, primary: false },
      ],
    },
    {
      id: "1",
      email: "octocat@github.com",
      emailVerified: true,
      displayName: "monalisa octocat",
      avatarUrl: "https://github.com/images/error/octocat_happy.gif",
    },
  ],
  google: [
    {
      idToken: {
        sub: "110169484474386276334",
        email: "jane@gmail.com",
        email_verified: true,
        name: "Jane Doe",
        picture: "https://lh3.googleusercontent.com/a/x",
        locale: "en",
      },
    },
    {
      id: "110169484474386276334",
      email: "jane@gmail.com",
      emailVerified: true,
      displayName: "Jane Doe",
      avatarUrl: "https://lh3.googleusercontent.com/a/x",
      locale: "en",
    },
  ],
  linkedin: [
    {
      idToken: { sub: "782bbtaQ", email: "doe@email.com", email_verified: true },
      userinfo: {
        sub: "782bbtaQ",
        name: "John Doe",
        given_name: "John",
        family_name: "Doe",
        picture: "https://media.licdn.com/x",
        locale: "en-US",
      },
    },
    {
      id: "782bbtaQ",
      email: "doe@email.com",
      emailVerified: true,
      displayName: "John Doe",
      avatarUrl: "https://media.licdn.com/x",
      locale: "en-US",
    },
  ],
  discord: [
    {
      userinfo: {
        id: "80351110224678912",
        username: "nelly",
        global_name: "Nelly",
        avatar: "8342729096ea3675442027381ff50dfe",
        verified: true,
        email: "nelly@discord.com",
        locale: "en-US",
      },
    },
    {
      id: "80351110224678912",
      email: "nelly@discord.com",
      emailVerified: true,
      displayName: "Nelly",
      avatarUrl: "https://cdn.discordapp.com/avatars/80351110224678912/8342729096ea3675442027381ff50dfe.png",
      locale: "en-US",
    },
  ],
  spotify: [
    {
      userinfo: {
        id: "wizzler",
        display_name: "JM Wizzler",
        email: "email@example.com",
        images: [{ url: "https://i.scdn.co/image/x", height: 300, width: 300 }],
      },
    },
    {
      id: "wizzler",
      email: "email@example.com",
      emailVerified: false,
      displayName: "JM Wizzler",
      avatarUrl: "https://i.scdn.co/image/x",
    },
  ],
  twitch: [
    {
      userinfo: {
        data: [
          {
            id: "141981764",
            login: "twitchdev",
            display_name: "TwitchDev",
            profile_image_url: "https://static-cdn.jtvnw.net/x.png",
            email: "not-real@email.com",
          },
        ],
      },
    },
    {
      id: "141981764",
      email: "not-real@email.com",
      emailVerified: false,
      displayName: "TwitchDev",
      avatarUrl: "https://static-cdn.jtvnw.net/x.png",
    },
  ],
  gitlab: [
    {
      userinfo: {
        id: 1,
        username: "john_smith",
        name: "John Smith",
        avatar_url: "http://localhost:3000/uploads/user/avatar/1/index.jpg",
        email: "john@example.com",
        confirmed_at: "2012-05-23T09:05:22Z",
        preferred_language: "en",
      },
    },
    {
      id: "1",
      email: "john@example.com",
      emailVerified: true,
      displayName: "John Smith",
      avatarUrl: "http://localhost:3000/uploads/user/avatar/1/index.jpg",
      locale: "en",
    },
  ],
  bitbucket: [
    {
      userinfo: {
        uuid: "{d301aafa-d676-4ee0-88be-962be7417567}",
        display_name: "Tutorials Account",
        links: { avatar: { href: "https://avatar-management.example/x.png" } },
      },
      emails: { values: [{ email: "tutorials@bitbucket.org", is_primary: true, is_confirmed: true }] },
    },
    {
      id: "{d301aafa-d676-4ee0-88be-962be7417567}",
      email: "tutorials@bitbucket.org",
      emailVerified: true,
      displayName: "Tutorials Account",
      avatarUrl: "https://avatar-management.example/x.png",
    },
  ],
  workos: [
    {
      token: {
        access_token: "x",
        profile: {
          id: "prof_01DMC79VCBZ0NY2099737PSVF1",
          email: "todd@foo-corp.com",
          first_name: "Todd",
          last_name: "Rundgren",
          connection_id: "conn_01E4ZCR3C56J083X43JQXF3JK5",
        },
      },
    },
    {
      id: "prof_01DMC79VCBZ0NY2099737PSVF1",
      email: "todd@foo-corp.com",
      emailVerified: false,
      displayName: "Todd Rundgren",
    },
  ],
  azuread: [
    {
      idToken: {
        sub: "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ",
        email: "AlexW@contoso.com",
        name: "Alex Wilber",
      },
    },
    {
      id: "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ",
      email: "AlexW@contoso.com",
      emailVerified: false,
      displayName: "Alex Wilber",
    },
  ],
  entraid: [
    { idToken: { sub: "OlYS3vSk", email: "meganb@contoso.com", email_verified: true, name: "Megan Bowen" } },
    // Whatever the tenant claims, Microsoft's email is never taken as verified.
    { id: "OlYS3vSk", email: "meganb@contoso.com", emailVerified: false, displayName: "Megan Bowen" },
  ],
  strava: [
    {
      token: {
        access_token: "x",
        athlete: {
          id: 134815,
          firstname: "John",
          lastname: "Applestrava",
          profile: "https://dgalywyr863hv.cloudfront.net/x.jpg",
        },
      },
    },
    {
      id: "134815",
      emailVerified: false,
      displayName: "John Applestrava",
      avatarUrl: "https://dgalywyr863hv.cloudfront.net/x.jpg",
    },
  ],
  facebook: [
    {
      userinfo: {
        id: "10224",
        name: "Sam Sample",
        email: "sam@example.com",
        picture: { data: { url: "https://platform-lookaside.fbsbx.com/x", height: 50, width: 50 } },
      },
    },
    {
      id: "10224",
      email: "sam@example.com",
      emailVerified: false,
      displayName: "Sam Sample",
      avatarUrl: "https://platform-lookaside.fbsbx.com/x",
    },
  ],
  windowslive: [
    {
      userinfo: {
        id: "8c8ce076ca27823f",
        name: "Roberto Tamburello",
        locale: "en_US",
        emails: { preferred: "Roberto@contoso.com", account: "Roberto@contoso.com" },
      },
    },
    {
      id: "8c8ce076ca27823f",
      email: "Roberto@contoso.com",
      emailVerified: false,
      displayName: "Roberto Tamburello",
      locale: "en_US",
    },
  ],
  twitter: [
    {
      userinfo: {
        data: {
          id: "2244994945",
          name: "X Dev",
          username: "XDevelopers",
          profile_image_url: "https://pbs.twimg.com/x.jpg",
        },
      },
    },
    {
      id: "2244994945",
      emailVerified: false,
      displayName: "X Dev",
      avatarUrl: "https://pbs.twimg.com/x.jpg",
    },
  ],
};

describe("profile mappings", () => {
  for (const name of PROVIDER_NAMES) {
    it(`${name}`, () => {
      const [sources, profile] = SAMPLES[name];
      expect(PROVIDERS[name].profile({ ...none, ...sources })).toEqual(expect.objectContaining(profile));
      // An answer without a user id is no profile.
      expect(PROVIDERS[name].profile(none)).toBeNull();
    });
  }
});
