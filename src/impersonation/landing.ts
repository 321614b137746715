import { and, eq, gt, isNull } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { asPages } from "../browser/page-faults";
import { startBrowserSession } from "../browser/session";
import { impersonations } from "../db/schema";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import type { Deps } from "../http/deps";
import { FAULT_PAGE_ANSWERS, operation } from "../http/documented";
import { decrypt, sha256Hex } from "../lib/crypto";
import { withQuery } from "../lib/redirect";

/**
 * The landing link of an impersonation (contract operators.md §1): spent by one conditional statement (its hash
 * cleared only if it is still there, unexpired, and the impersonation runs), so a second opening lands nobody. It
 * lands the app exactly as a provider sign-in does (`redirectTo?refreshToken=…`, src/providers/flow.ts), and signs
 * this browser in to the hosted pages and the account center, where the banner names who acts.
 */

const landedSchema = z.object({ refreshToken: z.string(), target: z.string() });

async function takeLanding(deps: Deps, ticket: string) {
  if (ticket.length < 20 || ticket.length > 100) return undefined;
  const now = deps.now();
  const row = await deps.db
    .update(impersonations)
    .set({ landingHash: null })
    .where(
      and(
        eq(impersonations.landingHash, await sha256Hex(ticket)),
        gt(impersonations.landingExpiresAt, now),
        gt(impersonations.endsAt, now),
        isNull(impersonations.endedAt),
      ),
    )
    .returning({ id: impersonations.id, userId: impersonations.userId, sealed: impersonations.landingSealed })
    .get();
  if (!row?.sealed) return undefined;
  // RETURNING reads the row as updated, so the sealed token is cleared by a second statement: the spend above was
  // the atomic one (no hash, no landing), this only keeps no credential at rest longer than needed.
  deps.background(
    deps.db.update(impersonations).set({ landingSealed: null }).where(eq(impersonations.id, row.id)).run(),
  );
  const landed = landedSchema.parse(JSON.parse(await decrypt(deps.config.secrets.encryptionKey, row.sealed)));
  return { ...landed, sessionId: row.id, userId: row.userId };
}

/** A person's browser follows the link: a fault is the pages' fault page (`asPages`), not the API's JSON. */
export const landingRoutes = asPages(
  new Hono<AppEnv>().get(
    "/impersonation/land",
    operation({
      summary: "Open an impersonation",
      description:
        "The one-time link `POST /admin/users/{id}/impersonate` answers: within 60 seconds, once, it sends the browser " +
        "to the app with `refreshToken` (as a provider sign-in lands). Used, expired or unknown: to the app's default " +
        "URL with `error=invalid-ticket`.",
      security: "none",
      answers: {
        302: { description: "To the app." },
        ...FAULT_PAGE_ANSWERS,
      },
    }),
    async (c) => {
      const { deps } = c.var;
      const landed = await takeLanding(deps, c.req.query("ticket") ?? "");
      if (!landed) {
        const error = new AppError(
          "invalid-ticket",
          "this impersonation link was used, has expired, or is not one",
        );
        return c.redirect(
          withQuery(deps.config.urls.defaultRedirect, { error: error.code, errorDescription: error.message }),
          302,
        );
      }
      await startBrowserSession(c, landed.userId, landed.sessionId, ["sign-in"]);
      c.header("Cache-Control", "no-store");
      c.header("Referrer-Policy", "no-referrer");
      return c.redirect(withQuery(landed.target, { refreshToken: landed.refreshToken }), 302);
    },
  ),
);
