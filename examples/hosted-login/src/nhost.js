import { createClient } from "@nhost/nhost-js";

/**
 * Where the service answers. `npm start` serves auth and storage on http://localhost:8787; another server is named
 * at build time with VITE_AUTH_URL and VITE_STORAGE_URL (the environment, or a .env file beside index.html, as Vite
 * reads them).
 */
export const authUrl = import.meta.env.VITE_AUTH_URL ?? "http://localhost:8787/auth/v1";
export const storageUrl = import.meta.env.VITE_STORAGE_URL ?? "http://localhost:8787/storage/v1";

/** nhost-js's browser client: the session in localStorage, the access token refreshed before it expires. */
export const nhost = createClient({ authUrl, storageUrl });

/** The message of a failed call: the service's `{error, message}` body when there is one. */
export function messageOf(error) {
  return error?.body?.message ?? error?.message ?? String(error);
}
