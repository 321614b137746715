import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { RateLimitedError } from "../../errors";
import { accountPost, type Ctx, field, type Posted, type Signed } from "../forms";
import { accountFrame } from "../frame";
import { confirmHref, type RecentAuthOptions, requireRecentAuth } from "../recent-auth";
import { refusal } from "./words";

/** What the security sections share: the checks of a post, their step pages, the confirm link, the fields. */

/**
 * A sensitive post of a section: the account center's checks (a same-origin post of a signed-in browser, forms.ts),
 * then a recent confirmation (recent-auth.ts; `elevated` where the API asks an elevated token). Otherwise the answer
 * to give instead: the problem page, the sign-in, or the re-authentication coming back to `#section`.
 */
export async function confirmedPost(
  c: Ctx,
  section: string,
  /** Or, when they depend on the user (a first passkey needs no elevation), worked out from the post. */
  options: RecentAuthOptions | ((posted: Posted) => Promise<RecentAuthOptions>) = {},
): Promise<{ answer: Response } | Posted> {
  const posted = await accountPost(c);
  if ("answer" in posted) return posted;
  const demand = typeof options === "function" ? await options(posted) : options;
  const gate = await requireRecentAuth(c, posted.session, section, demand);
  return gate ? { answer: gate } : posted;
}

/**
 * Runs a service call; a refusal the page has words for (refusal in words.ts) becomes `again(words, status)`.
 * Anything else is thrown on, to the app's error handler, like everywhere else.
 */
export async function attempt<T>(
  signed: Signed,
  call: () => Promise<T>,
  again: (words: string, status: 400 | 429) => Response | Promise<Response>,
  /** Words for a refusal particular to the call (a failed WebAuthn ceremony), before the common ones. */
  wordsFor?: (error: unknown) => string | undefined,
): Promise<{ value: T } | { answer: Response | Promise<Response> }> {
  try {
    return { value: await call() };
  } catch (error) {
    const words = wordsFor?.(error) ?? refusal(signed.catalogue.accountSecurity, error);
    if (words === undefined) throw error;
    return { answer: again(words, error instanceof RateLimitedError ? 429 : 400) };
  }
}

type Body = HtmlEscapedString | Promise<HtmlEscapedString>;

/**
 * A step of a section on a page of its own, in the account center's frame (with the way back to the page). A step
 * that shows a secret (a TOTP key, recovery codes, a new token) is `no-store`: no cache, the browser's back-forward
 * one included, keeps it after the person has moved on (RFC 9111 §5.2.2.5).
 */
export function securityStep(
  c: Ctx,
  signed: Signed,
  input: {
    title: string;
    body: Body;
    status?: 200 | 400 | 401 | 403 | 404 | 429;
    script?: string;
    secret?: boolean;
  },
) {
  if (input.secret) c.header("Cache-Control", "no-store");
  return accountFrame(c, {
    session: signed.session,
    catalogue: signed.catalogue,
    title: input.title,
    body: input.body,
    ...(input.status ? { status: input.status } : {}),
    ...(input.script ? { script: input.script } : {}),
  });
}

/** In place of a sensitive form until the person has confirmed it is them: a link to the re-authentication. */
export const confirmLink = (c: Ctx, signed: Signed, section: string, options: RecentAuthOptions = {}) =>
  html`<p><a href="${confirmHref(c, section, options)}">${signed.catalogue.accountSecurity.confirmToChange}</a></p>`;

/** A TOTP or recovery code as typed: spaces out, bounded like the API's code field (32). */
export const codeOf = (params: URLSearchParams) => field(params, "code", 64).replace(/\s/g, "").slice(0, 32);

/** An id posted by a list's button: bounded, and only the characters ids are made of (never echoed anyway). */
export const idOf = (params: URLSearchParams) => {
  const id = field(params, "id", 100);
  return /^[A-Za-z0-9_-]+$/.test(id) ? id : "";
};
