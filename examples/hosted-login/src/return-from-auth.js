import { nhost } from "./nhost.js";

/** What the service adds to this app's address when it sends the browser back. */
const RETURN_PARAMETERS = ["refreshToken", "type", "error", "errorDescription"];

/**
 * Finishes a sign-in that happened on the service's side: the hosted sign-in page and the link in a verification mail
 * both send the browser back here with `?refreshToken=…` (or `?error=…&errorDescription=…`). The parameters leave
 * the address bar first, whatever happens next: a refresh token must not stay in the history, a bookmark or a link
 * someone copies. Then the token is exchanged (`POST /token`) for a session, which nhost-js stores; the token from
 * the address is spent by that exchange (the service rotates refresh tokens).
 *
 * Returns a problem to show the person, or null.
 */
export async function returnFromAuth() {
  const url = new URL(location.href);
  const refreshToken = url.searchParams.get("refreshToken");
  const error = url.searchParams.get("errorDescription") ?? url.searchParams.get("error");
  if (!refreshToken && !error) return null;
  for (const name of RETURN_PARAMETERS) url.searchParams.delete(name);
  history.replaceState(history.state, "", url);
  if (error) return error;
  try {
    await nhost.auth.refreshToken({ refreshToken });
    return null;
  } catch {
    // An address opened twice (a reload before the clean-up, a copied link) or a token past its lifetime.
    return "That sign-in has expired or was already used. Please sign in again.";
  }
}
