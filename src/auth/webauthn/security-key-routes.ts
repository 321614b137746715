import { Hono } from "hono";
import { z } from "zod";
import { AppError } from "../../errors";
import type { AppEnv } from "../../http/app-env";
import { requireAuth } from "../../http/auth";
import { OK_ANSWER, operation } from "../../http/documented";
import { requireElevation } from "./elevation";
import { deleteSecurityKey, listSecurityKeys } from "./security-keys";

/**
 * A user's own security keys (improvement; not in the reference, which leaves this to GraphQL): the list, and
 * removing one, so a key someone else registered on the account, or a lost one, can be taken off it. Removing is
 * an E operation (contract §6), like adding. docs/decisions.md, "Security keys".
 */
export const securityKeyRoutes = new Hono<AppEnv>()
  .get(
    "/user/security-keys",
    operation({
      summary: "The user's security keys",
      description: "Each key's id, nickname, transports and creation time (never the public key).",
      security: "bearer",
      answers: {
        200: {
          description: "The keys, oldest first.",
          schema: z.object({
            securityKeys: z.array(
              z.object({
                id: z.string(),
                nickname: z.string().nullable(),
                transports: z.array(z.string()),
                createdAt: z.iso.datetime(),
              }),
            ),
          }),
        },
      },
    }),
    requireAuth,
    async (c) =>
      c.json({
        securityKeys: await listSecurityKeys(c.var.deps.shards.ofUser(c.var.auth!.sub), c.var.auth!.sub),
      }),
  )
  .delete(
    "/user/security-keys/:id",
    operation({
      summary: "Remove a security key",
      description:
        "Takes a key off the account (a lost one, or one someone else added). 400 for an unknown id.",
      security: "elevated",
      answers: { 200: OK_ANSWER("Removed.") },
    }),
    requireAuth,
    requireElevation(),
    async (c) => {
      if (
        !(await deleteSecurityKey(
          c.var.deps.shards.ofUser(c.var.auth!.sub),
          c.var.auth!.sub,
          c.req.param("id"),
        ))
      ) {
        throw new AppError("invalid-request", "the user has no security key with this id");
      }
      return c.json("OK");
    },
  );
