import { type Context, Hono } from "hono";
import { z } from "zod";
import { asPages } from "../../browser/page-faults";
import { render } from "../../browser/page-response";
import { catalogueFor } from "../../browser/page-text";
import type { Catalogue } from "../../browser/text";
import { platformFault } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { logError } from "../../http/context";
import { type AnswerDoc, FAULT_PAGE_ANSWERS, operation } from "../../http/documented";
import { rateLimit } from "../../rate-limits/middleware";
import { findUserById } from "../users";
import { UNLOCK_PATH } from "./lockout-mail";
import { unlockWithTicket, userIdOfTicket } from "./unlock";
import { notUnlocked, unlocked, unlockQuestion } from "./unlock-page";

type Ctx = Context<AppEnv>;

const PAGE = (description: string): AnswerDoc => ({ description, media: "html" });
const ticketField = z.object({ ticket: z.string().describe("`<userId>.<secret>`, as mailed") });

/** The page speaks the language of the user the link was mailed to, else the browser's (contract §13). */
async function wordsFor(c: Ctx, ticket: string): Promise<Catalogue> {
  const userId = userIdOfTicket(ticket);
  // The language only: a user that cannot be read now is no reason to refuse the page.
  const user = userId ? await findUserById(c.var.deps.shards, userId).catch(() => undefined) : undefined;
  return catalogueFor(c, [], user?.locale);
}

/**
 * Where the lockout mail's link lands (docs/protection.md "Lockout"). `GET` only asks (a mail scanner fetching the link
 * unlocks nothing); the page's own form posts the ticket back, from this origin only, and the ticket unlocks the
 * factor it was mailed for, once. A person opened it from a mail: a fault it does not answer itself (the rate limit's
 * count, a failure that is no platform fault) is the pages' fault page (`asPages`), not the API's JSON.
 */
export const unlockRoutes = asPages(
  new Hono<AppEnv>()
    .get(
      UNLOCK_PATH,
      operation({
        summary: "Unlock a locked sign-in (the mailed link)",
        description:
          "The link of the lockout mail (contract §13): a page, in the user's language, asking to unlock, whose button " +
          "posts to `POST /unlock`. Nothing is checked or spent here.",
        request: { target: "query", schema: ticketField },
        answers: {
          200: PAGE("The question and its button."),
          400: PAGE("The link is incomplete."),
          ...FAULT_PAGE_ANSWERS,
        },
      }),
      async (c) => {
        const ticket = (c.req.query("ticket") ?? "").slice(0, 200);
        const t = await wordsFor(c, ticket);
        const words = t.lockout.page;
        if (!userIdOfTicket(ticket)) {
          return render(c, 400, words.title, notUnlocked(words.title, words.incomplete), { t: t.pages });
        }
        return render(c, 200, words.title, unlockQuestion(words, new URL(c.req.url).pathname, ticket), {
          t: t.pages,
        });
      },
    )
    .post(
      UNLOCK_PATH,
      operation({
        summary: "Unlock a locked sign-in",
        description:
          "The form of `GET /unlock`: the ticket unlocks the sign-in method whose lock it was mailed for and forgets " +
          "its failures, once (a second use, or a link more than a day old, is refused). Posted from another origin: " +
          "403, nothing unlocked.",
        request: { target: "form", schema: ticketField },
        answers: {
          200: PAGE("Unlocked."),
          400: PAGE("The link no longer works: used, too old, or not one."),
          403: PAGE("The form came from another site: nothing unlocked."),
          ...FAULT_PAGE_ANSWERS,
          503: PAGE("The lockout or its rate limit cannot be reached now: nothing unlocked; try again."),
        },
      }),
      rateLimit("BRUTE_FORCE"),
      async (c) => {
        const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
        const ticket = typeof form.ticket === "string" ? form.ticket.slice(0, 200) : "";
        const t = await wordsFor(c, ticket);
        const words = t.lockout.page;
        const refuse = (status: 400 | 403 | 503, message: string, title = words.title) =>
          render(c, status, title, notUnlocked(title, message), { t: t.pages });
        // Browsers name the posting page's origin: a form posted from another site unlocks nothing.
        if (c.req.header("origin") !== new URL(c.req.url).origin) return refuse(403, words.otherSite);
        try {
          const done = await unlockWithTicket(c.var.deps, ticket);
          if (!done) return refuse(400, words.failedLead, words.failedTitle);
        } catch (error) {
          const fault = platformFault(error);
          if (!fault) throw error;
          logError(c.var.requestId, "unlock", error, "warn");
          c.header("Retry-After", String(fault.retryAfterSeconds));
          return refuse(503, words.unavailable);
        }
        return render(c, 200, words.doneTitle, unlocked(words, c.var.config.urls.client), { t: t.pages });
      },
    ),
);
