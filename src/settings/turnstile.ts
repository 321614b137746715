import { z } from "zod";
import { ConfigError } from "../errors";
import { isLocalUrl, list, settingsSlice, url } from "./kit";

/**
 * What Turnstile can guard, by name (`AUTH_TURNSTILE_ENDPOINTS`; each is also the widget `action` the built-in page
 * uses): `signup` every request that can create a user (src/http/sign-up-gate.ts), `passwordless` every mail or SMS
 * sign-in send, `password-reset` the reset mail,
 * `signin` email and password, `oauth2-registration` dynamic client registration.
 */
export const TURNSTILE_ENDPOINTS = [
  "signup",
  "passwordless",
  "password-reset",
  "signin",
  "oauth2-registration",
] as const;
export type TurnstileEndpoint = (typeof TURNSTILE_ENDPOINTS)[number];

export interface TurnstileConfig {
  secret: string;
  siteKey: string | null;
  endpoints: ReadonlySet<TurnstileEndpoint>;
  verifyUrl: string;
  hostnames: ReadonlySet<string>;
}

interface Before {
  urls: { server: string; client: string; corsOrigins: string[]; allowedRedirects: string[] };
}

/**
 * Cloudflare Turnstile (contract §9): when the secret is set, the endpoints listed require a passed challenge. The
 * verification URL may be http only on loopback (a local fake): anything else would send the secret in clear. The
 * hostnames a challenge may come from default to the hosts this deployment serves pages or front-ends on.
 */
export const turnstileSettings = settingsSlice(
  z.object({
    AUTH_TURNSTILE_SECRET: z.string().min(1).optional(),
    AUTH_TURNSTILE_SITE_KEY: z.string().min(1).optional(),
    AUTH_TURNSTILE_ENDPOINTS: list(["signup"]).pipe(z.array(z.enum(TURNSTILE_ENDPOINTS))),
    AUTH_TURNSTILE_VERIFY_URL: url.default("https://challenges.cloudflare.com/turnstile/v0/siteverify"),
    /** Hostnames a challenge may have been solved on; default: those of the server, the client URL and CORS origins. */
    AUTH_TURNSTILE_HOSTNAMES: list(),
  }),
  (data, { urls }: Before): { turnstile: TurnstileConfig | null } => {
    if (!data.AUTH_TURNSTILE_SECRET) return { turnstile: null };
    const verifyUrl = data.AUTH_TURNSTILE_VERIFY_URL;
    if (new URL(verifyUrl).protocol !== "https:" && !isLocalUrl(verifyUrl)) {
      throw new ConfigError(
        "invalid configuration: AUTH_TURNSTILE_VERIFY_URL must be https (http only on loopback, for a local fake)",
      );
    }
    const hostnames =
      data.AUTH_TURNSTILE_HOSTNAMES.length > 0
        ? data.AUTH_TURNSTILE_HOSTNAMES
        : [urls.server, urls.client, ...urls.corsOrigins, ...urls.allowedRedirects].flatMap((value) => {
            try {
              const { hostname } = new URL(value);
              return hostname && !hostname.includes("*") ? [hostname] : [];
            } catch {
              return [];
            }
          });
    return {
      turnstile: {
        secret: data.AUTH_TURNSTILE_SECRET,
        siteKey: data.AUTH_TURNSTILE_SITE_KEY ?? null,
        endpoints: new Set(data.AUTH_TURNSTILE_ENDPOINTS),
        verifyUrl,
        hostnames: new Set(hostnames.map((host) => host.toLowerCase())),
      },
    };
  },
);
