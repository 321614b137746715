import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { html } from "hono/html";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { bodyText } from "../http/validation";
import { findOrg } from "../orgs";
import { isSameOrigin } from "../pages";
import { linkOf, type SetupEnv } from "./credential";
import type { Intent } from "./links";
import { setupPage, wordsOf } from "./render";

/** What every page of the setup link uses: its org's name, the checked form of a post, a step's outcome. */

export type SetupCtx = Context<SetupEnv>;

export async function orgNameOf(c: SetupCtx) {
  return (await findOrg(c.var.deps, linkOf(c).orgId))?.name ?? "";
}

/** The form of a post, or null for one from another site. */
export async function formOf(c: SetupCtx): Promise<URLSearchParams | null> {
  if (!isSameOrigin(c as unknown as Context<AppEnv>)) return null;
  return new URLSearchParams((await bodyText(c as unknown as Context<AppEnv>)).slice(0, 70_000));
}

export const otherSite = (c: SetupCtx) => {
  const { words } = wordsOf(c);
  return setupPage(
    c,
    403,
    words.goneTitle,
    html`<h1>${words.goneTitle}</h1><p class="lead">${words.otherSite}</p>`,
  );
};

/** The AppError codes a step shows as its outcome; anything else (a 5xx) goes to the error handler. */
export function outcomeOf(error: unknown): string {
  if (error instanceof AppError && error.status < 500) return error.code;
  throw error;
}

/** A step the link does not include: a page saying so (403), never the step. */
export function intentGuard(intent: Intent) {
  return createMiddleware<SetupEnv>(async (c, next) => {
    if (!linkOf(c).intents.includes(intent)) {
      const { words } = wordsOf(c);
      return setupPage(
        c,
        403,
        words.goneTitle,
        html`<h1>${words.goneTitle}</h1><p class="lead">${words.notAllowed}</p>`,
      );
    }
    await next();
  });
}
