import { desc, eq } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import type { Config } from "../../config";
import { devMailbox, devSms } from "../../db/schema";
import type { AppEnv } from "../../http/app-env";
import { corsOrigins } from "../../http/cors";
import { operation } from "../../http/documented";
import { queryParams } from "../../http/validation";
import { toE164 } from "../../lib/phone";
import { devLandingRoutes } from "./landing";

/**
 * Development-only endpoints: what the development transports "sent". Each is mounted only with its switch
 * (`AUTH_DEV_MAILBOX`, `AUTH_DEV_SMS`, set by `npm start`); otherwise these paths are 404.
 */
const recipient = queryParams(z.object({ to: z.string().min(1).max(254) }));
const LIMIT = 100;

const DEV_NOTE = " Development only: mounted with its switch, which `npm start` sets; never in production.";

export const devMailboxRoutes = new Hono<AppEnv>().get(
  "/dev/mailbox",
  operation({
    summary: "Mails sent to an address (development)",
    description: `What the development mail transport kept for \`to\`, newest first (100 at most).${DEV_NOTE}`,
    answers: {
      200: {
        description: "The mails.",
        schema: z.array(
          z.object({
            to: z.string(),
            subject: z.string(),
            text: z.string(),
            html: z.string(),
            createdAt: z.iso.datetime(),
          }),
        ),
      },
    },
  }),
  recipient,
  async (c) => {
    const rows = await c.var.deps.db
      .select()
      .from(devMailbox)
      .where(eq(devMailbox.to, c.req.valid("query").to.toLowerCase()))
      .orderBy(desc(devMailbox.id))
      .limit(LIMIT)
      .all();
    return c.json(
      rows.map(({ to, subject, text, html, createdAt }) => ({
        to,
        subject,
        text,
        html,
        createdAt: new Date(createdAt).toISOString(),
      })),
    );
  },
);

export const devSmsRoutes = new Hono<AppEnv>().get(
  "/dev/sms",
  operation({
    summary: "Text messages sent to a number (development)",
    description: `What the development SMS transport kept for \`to\`, newest first.${DEV_NOTE}`,
    answers: {
      200: {
        description: "The messages.",
        schema: z.array(z.object({ to: z.string(), body: z.string(), createdAt: z.iso.datetime() })),
      },
    },
  }),
  recipient,
  async (c) => {
    const { to } = c.req.valid("query");
    const rows = await c.var.deps.db
      .select()
      .from(devSms)
      .where(eq(devSms.to, toE164(to) ?? to))
      .orderBy(desc(devSms.id))
      .limit(LIMIT)
      .all();
    return c.json(
      rows.map(({ to, body, createdAt }) => ({ to, body, createdAt: new Date(createdAt).toISOString() })),
    );
  },
);

/**
 * Development server only: the landing page of links while no app exists (landing.ts), and what `npm start` prints
 * once the service answers (scripts/start.mjs): the settings as the Worker resolved them, so
 * the printout cannot disagree with the server. No secret. Mounted on a development server only.
 */
export function devAboutRoutes(config: Config) {
  return new Hono<AppEnv>().route("/", devLandingRoutes).get(
    "/dev/about",
    operation({
      summary: "The local server's settings (development)",
      description:
        "What `npm start` prints: the browser origins allowed, the OAuth2 issuer. A development server only.",
      answers: {
        200: {
          description: "The settings.",
          schema: z.object({
            corsOrigins: z.array(z.string()),
            clientUrl: z.string(),
            oauth2: z.object({
              enabled: z.boolean(),
              issuer: z.string(),
              discovery: z.string(),
              registration: z.string(),
              devicePage: z.string(),
            }),
            startId: z.string().optional(),
          }),
        },
      },
    }),
    (c) => {
      const issuer = config.urls.server;
      const { origin, pathname } = new URL(issuer);
      return c.json({
        corsOrigins: corsOrigins(config),
        clientUrl: config.urls.client,
        oauth2: {
          enabled: config.oauth2.enabled,
          issuer,
          discovery: `${origin}/.well-known/oauth-authorization-server${pathname.replace(/\/$/, "")}`,
          registration: config.oauth2.registration,
          devicePage: `${issuer}/oauth2/device`,
        },
        // What `npm start` handed its wrangler dev (`--var DEV_START_ID`): tells its server from another on the port.
        ...(typeof c.env.DEV_START_ID === "string" ? { startId: c.env.DEV_START_ID } : {}),
      });
    },
  );
}
