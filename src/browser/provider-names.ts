/** Provider ids as people know them: the sign-in page's buttons, the account center's lists, the link question. */
const PROVIDER_NAMES: Record<string, string> = {
  github: "GitHub",
  google: "Google",
  apple: "Apple",
  linkedin: "LinkedIn",
  gitlab: "GitLab",
  bitbucket: "Bitbucket",
  discord: "Discord",
  twitch: "Twitch",
  spotify: "Spotify",
  facebook: "Facebook",
  azuread: "Microsoft",
  entraid: "Microsoft",
  workos: "WorkOS",
  strava: "Strava",
  twitter: "X",
  windowslive: "Microsoft",
};
/**
 * A provider's name on a button or in a list: a custom provider's (`AUTH_CUSTOM_PROVIDERS`) from its configuration,
 * when the caller passes the switched-on providers, else a built-in's.
 */
export const providerName = (id: string, enabled?: Record<string, { custom?: { name: string } }>) =>
  (enabled && Object.hasOwn(enabled, id) ? enabled[id]!.custom?.name : undefined) ??
  PROVIDER_NAMES[id] ??
  id.charAt(0).toUpperCase() + id.slice(1);
