import { type Context, Hono } from "hono";
import { z } from "zod";
import {
  createUserRecord,
  deleteUser,
  listUsersPage,
  patchUserRecord,
  requireUser,
  softDeleteUser,
} from "../../../admin";
import { auditAdminAction } from "../../../audit/admin-action";
import { changeUserPassword, toWireUser } from "../../../auth";
import { AppError } from "../../../errors";
import type { AppEnv } from "../../../http/app-env";
import { metadataSchema } from "../../../lib/json-metadata";
import { checkApiKey } from "../api-keys";
import { banLengthMs } from "./ban-duration";
import { GoTrueError } from "./errors";
import { bodyOf } from "./request";
import { extrasOf, wholeGoTrueUser } from "./user-reads";
import { goTrueUser } from "./wire";

/**
 * GoTrue's admin namespace (`supabase.auth.admin.*`, contract supabase.md §2) for the service role: the admin API's
 * own functions (src/admin/), their rules and their audit events (`admin.user.create`, …), shaped as GoTrue's. The
 * service role is a secret key (or the admin secret) with no user token beside it: supabase-js created with the
 * secret key sends it as both `apikey` and the bearer; a user's token in `Authorization` makes the call the user's,
 * and a user is no admin.
 */

export async function requireServiceRole(c: Context<AppEnv>) {
  const key = await checkApiKey(c, c.var.config);
  const bearer = /^Bearer (\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
  const apikey = c.req.header("apikey") ?? bearer;
  if (!("role" in key) || key.role !== "service_role" || (bearer !== undefined && bearer !== apikey)) {
    throw new GoTrueError(403, "not_admin", "User not allowed");
  }
}

const newUser = z.object({
  email: z.email().max(254).nullish(),
  phone: z.string().max(32).nullish(),
  password: z.string().min(1).max(1024).nullish(),
  email_confirm: z.boolean().nullish(),
  user_metadata: metadataSchema.nullish(),
  // The service role's alone (this namespace); bounded as every metadata is, and merged (admin/users.ts).
  app_metadata: metadataSchema.nullish(),
});

const userChange = z.object({
  password: z.string().min(1).max(1024).nullish(),
  email_confirm: z.boolean().nullish(),
  user_metadata: metadataSchema.nullish(),
  app_metadata: metadataSchema.nullish(),
  // `none` lifts a ban; a Go duration bans until then (ban-duration.ts).
  ban_duration: z.string().max(64).nullish(),
});

const userId = z.uuid();

const deletion = z.object({ should_soft_delete: z.boolean().nullish() });

const pageQuery = z.object({
  page: z.coerce.number().int().min(1).max(10_000).catch(1),
  per_page: z.coerce.number().int().min(1).max(1000).catch(50),
});

export async function userOf(c: Context<AppEnv>) {
  const id = userId.safeParse(c.req.param("id"));
  if (!id.success) throw new GoTrueError(404, "user_not_found", "User not found");
  try {
    return await requireUser(c.var.deps, id.data);
  } catch (error) {
    if (error instanceof AppError && error.status === 404) {
      throw new GoTrueError(404, "user_not_found", "User not found");
    }
    throw error;
  }
}

/** A timed ban still running (src/auth/housekeeping.ts lifts it within the minute after). */
const bannedUntilOf = (user: { disabled: boolean; bannedUntil: number | null }) =>
  user.disabled && user.bannedUntil !== null ? user.bannedUntil : undefined;

/** GoTrue's `banned_until`, present while a timed ban runs. */
const banField = (until: number | undefined) =>
  until === undefined ? {} : { banned_until: new Date(until).toISOString() };

export const goTrueAdminRoutes = new Hono<AppEnv>()
  .use("/admin/*", async (c, next) => {
    await requireServiceRole(c);
    await next();
  })
  .get("/admin/users", async (c) => {
    const query = pageQuery.parse({
      page: c.req.query("page") || undefined,
      per_page: c.req.query("per_page") || undefined,
    });
    const { rows, total } = await listUsersPage(c.var.deps, { page: query.page, perPage: query.per_page });
    // GoTrue's paging headers, which auth-js reads into `nextPage`, `lastPage` and `total`.
    const last = Math.max(1, Math.ceil(total / query.per_page));
    const link = (page: number, rel: string) =>
      `</admin/users?page=${page}&per_page=${query.per_page}>; rel="${rel}"`;
    const links = [...(query.page < last ? [link(query.page + 1, "next")] : []), link(last, "last")];
    c.header("x-total-count", String(total));
    c.header("link", links.join(", "));
    const extras = await extrasOf(
      c.var.deps,
      rows.map((row) => row.id),
    );
    const users = rows.map((row) => wholeGoTrueUser(toWireUser(row), extras.get(row.id)));
    return c.json({ users, aud: "authenticated" });
  })
  .post("/admin/users", async (c) => {
    const body = await bodyOf(c, newUser);
    if (!body.email) {
      throw new GoTrueError(
        400,
        "validation_failed",
        "Creating a user by phone number is not available on this face yet",
      );
    }
    const user = await createUserRecord(c.var.deps, {
      email: body.email,
      password: body.password ?? undefined,
      emailVerified: body.email_confirm ?? false,
      options: { metadata: body.user_metadata ?? undefined },
      method: "admin",
      appMetadata: body.app_metadata ?? undefined,
    });
    auditAdminAction(c, "user.create", user.id, { email: user.email ?? null });
    // A new user: no linked identity nor factor yet, so nothing more to read.
    return c.json(
      wholeGoTrueUser(toWireUser(user), { identities: [], factors: [], appMetadata: user.appMetadata }),
    );
  })
  .get("/admin/users/:id", async (c) => {
    const user = await userOf(c);
    const extras = (await extrasOf(c.var.deps, [user.id])).get(user.id);
    return c.json({ ...wholeGoTrueUser(toWireUser(user), extras), ...banField(bannedUntilOf(user)) });
  })
  .put("/admin/users/:id", async (c) => {
    const user = await userOf(c);
    const body = await bodyOf(c, userChange);
    if (body.password) {
      await changeUserPassword(c.var.deps, { newPassword: body.password }, { sub: user.id, sid: undefined });
    }
    const banMs = body.ban_duration ? banLengthMs(body.ban_duration) : undefined;
    // A ban that ends now or before is none (Go's zero or negative duration).
    const bannedUntil = banMs ? c.var.deps.now() + banMs : undefined;
    const updated = await patchUserRecord(c.var.deps, user.id, {
      ...(body.user_metadata ? { metadata: body.user_metadata } : {}),
      ...(body.app_metadata ? { appMetadata: body.app_metadata } : {}),
      ...(body.email_confirm ? { emailVerified: true } : {}),
      ...(banMs !== undefined ? { disabled: banMs !== null && banMs > 0, bannedUntil } : {}),
    });
    auditAdminAction(c, "user.update", user.id, { fields: Object.keys(body) });
    const bannedTill = banMs === undefined ? bannedUntilOf(user) : bannedUntil;
    const extras = (await extrasOf(c.var.deps, [user.id])).get(user.id);
    return c.json({ ...wholeGoTrueUser(toWireUser(updated), extras), ...banField(bannedTill) });
  })
  .delete("/admin/users/:id", async (c) => {
    const user = await userOf(c);
    // auth-js's `deleteUser(id, true)`: GoTrue's soft deletion keeps the row (src/admin/soft-delete.ts).
    const raw = await c.req.text();
    const { should_soft_delete: soft } = raw ? await bodyOf(c, deletion) : { should_soft_delete: false };
    if (soft) {
      const kept = await softDeleteUser(c.var.deps, user.id);
      auditAdminAction(c, "user.delete", kept.id, { email: user.email, soft: true });
      return c.json(goTrueUser(toWireUser(kept)));
    }
    const deleted = await deleteUser(c.var.deps, user.id);
    auditAdminAction(c, "user.delete", deleted.id, { email: deleted.email });
    return c.json(goTrueUser(toWireUser(deleted)));
  });
