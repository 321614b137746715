import { type Context, Hono } from "hono";
import { z } from "zod";
import { createUser, deleteUser, listUsersPage, patchUser, requireUser } from "../../../admin";
import { auditAdminAction } from "../../../audit/admin-action";
import { changeUserPassword, toWireUser } from "../../../auth";
import { AppError } from "../../../errors";
import type { AppEnv } from "../../../http/app-env";
import { metadataSchema } from "../../../lib/json-metadata";
import { checkApiKey } from "../api-keys";
import { GoTrueError } from "./errors";
import { bodyOf } from "./request";
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
});

const userChange = z.object({
  password: z.string().min(1).max(1024).nullish(),
  email_confirm: z.boolean().nullish(),
  user_metadata: metadataSchema.nullish(),
  // `none` lifts a ban; a timed ban needs an expiry the service does not keep yet: refused, not made permanent.
  ban_duration: z.literal("none").nullish(),
});

const userId = z.uuid();

const pageQuery = z.object({
  page: z.coerce.number().int().min(1).max(10_000).catch(1),
  per_page: z.coerce.number().int().min(1).max(1000).catch(50),
});

async function userOf(c: Context<AppEnv>) {
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
    return c.json({ users: rows.map((row) => goTrueUser(toWireUser(row))), aud: "authenticated" });
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
    const user = await createUser(c.var.deps, {
      email: body.email,
      password: body.password ?? undefined,
      emailVerified: body.email_confirm ?? false,
      options: { metadata: body.user_metadata ?? undefined },
      method: "admin",
    });
    auditAdminAction(c, "user.create", user.id, { email: user.email ?? null });
    return c.json(goTrueUser(user));
  })
  .get("/admin/users/:id", async (c) => c.json(goTrueUser(toWireUser(await userOf(c)))))
  .put("/admin/users/:id", async (c) => {
    const user = await userOf(c);
    const body = await bodyOf(c, userChange);
    if (body.password) {
      await changeUserPassword(c.var.deps, { newPassword: body.password }, { sub: user.id, sid: undefined });
    }
    const updated = await patchUser(c.var.deps, user.id, {
      ...(body.user_metadata ? { metadata: body.user_metadata } : {}),
      ...(body.email_confirm ? { emailVerified: true } : {}),
      ...(body.ban_duration === "none" ? { disabled: false } : {}),
    });
    auditAdminAction(c, "user.update", user.id, { fields: Object.keys(body) });
    return c.json(goTrueUser(updated));
  })
  .delete("/admin/users/:id", async (c) => {
    const user = await userOf(c);
    const deleted = await deleteUser(c.var.deps, user.id);
    auditAdminAction(c, "user.delete", deleted.id, { email: deleted.email });
    return c.json(goTrueUser(toWireUser(deleted)));
  });
