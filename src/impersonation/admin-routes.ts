import { Hono } from "hono";
import { z } from "zod";
import { auditAdminAction } from "../audit/admin-action";
import { sessionSchema } from "../auth";
import type { AppEnv } from "../http/app-env";
import { NO_CONTENT, operation } from "../http/documented";
import { jsonBody } from "../http/validation";
import { endImpersonation, impersonationsOf } from "./end";
import { MAX_LIFETIME_S, startImpersonation } from "./start";

/**
 * `POST /admin/users/{id}/impersonate`'s body, and `AuthAdmin.impersonateUser`'s: why (required: it is audited and
 * mailed to the user), who (as the operator names themself), for how long, and where the landing link goes.
 */
export const impersonateBody = z.strictObject({
  reason: z.string().trim().min(1, "a reason is required").max(500),
  actor: z.string().trim().min(1, "name who acts").max(200),
  expiresIn: z.number().int().min(60).max(MAX_LIFETIME_S).optional(),
  redirectTo: z.string().max(2048).optional(),
});

const startedSchema = z.object({
  session: sessionSchema,
  url: z
    .string()
    .describe("One-time, 60 seconds: opens the app signed in as the user, as a provider sign-in lands"),
  expiresAt: z.string().describe("When the impersonation ends (ISO 8601); no token of it outlives this"),
});

const impersonationSchema = z.object({
  sessionId: z.string(),
  actor: z.string(),
  caller: z.string().nullable(),
  reason: z.string(),
  startedAt: z.string(),
  endsAt: z.string(),
  endedAt: z.string().nullable(),
  endedHow: z.string().nullable(),
});

const iso = (ms: number) => new Date(ms).toISOString();

/** Impersonation in the admin API (contract operators.md §1), behind the admin secret (src/runtime/app.ts). */
export const impersonationAdminRoutes = new Hono<AppEnv>()
  .post(
    "/users/:id/impersonate",
    operation({
      summary: "Impersonate a user",
      description:
        'A session of the user whose tokens carry `act: {sub: actor}` and `amr: ["imp"]` (RFC 8693 §4.1), ending ' +
        "after `expiresIn` seconds (default 3600, at most 28800) with no refresh past it, and a one-time `url` (60 s) " +
        "that opens the app signed in. The session grants, approves, links and creates nothing (403 `forbidden`). " +
        "409 `disabled-endpoint` unless `AUTH_IMPERSONATION_ENABLED`; 404 `not-found` for no such user; 400 " +
        "`invalid-request` without a reason or for a disabled user; 403 `forbidden` for a protected role or a member " +
        "of an org enforcing SSO unless `AUTH_IMPERSONATION_PRIVILEGED`. Audited at start and end.",
      security: "admin-secret",
      answers: { 200: { description: "The session and the landing link.", schema: startedSchema } },
    }),
    jsonBody(impersonateBody),
    async (c) => {
      const body = c.req.valid("json");
      const started = await startImpersonation(c.var.deps, {
        ...body,
        userId: c.req.param("id"),
        caller: null,
        userAgent: c.req.header("user-agent"),
      });
      return c.json({ session: started.session, url: started.url, expiresAt: iso(started.endsAt) });
    },
  )
  .get(
    "/users/:id/impersonations",
    operation({
      summary: "A user's impersonations",
      description: "The newest twenty, running or ended, with who acted, why and until when.",
      security: "admin-secret",
      answers: { 200: { description: "Impersonations.", schema: z.array(impersonationSchema) } },
    }),
    async (c) => {
      const rows = await impersonationsOf(c.var.deps, c.req.param("id"));
      return c.json(
        rows.map((row) => ({
          sessionId: row.id,
          actor: row.actor,
          caller: row.caller,
          reason: row.reason,
          startedAt: iso(row.startedAt),
          endsAt: iso(row.endsAt),
          endedAt: row.endedAt === null ? null : iso(row.endedAt),
          endedHow: row.endedHow,
        })),
      );
    },
  )
  .delete(
    "/impersonations/:sessionId",
    operation({
      summary: "End an impersonation",
      description:
        "Ends it now: its session's tokens refresh no more. 404 `not-found` for none; 400 `invalid-request` when it " +
        "has ended already. Audited; the user is mailed (`AUTH_IMPERSONATION_NOTIFY_USER`).",
      security: "admin-secret",
      answers: { 204: NO_CONTENT("Ended.") },
    }),
    async (c) => {
      const sessionId = c.req.param("sessionId");
      const userId = await endImpersonation(c.var.deps, sessionId, "admin");
      auditAdminAction(c, "impersonation.ended-early", userId, { sessionId });
      return c.body(null, 204);
    },
  );
