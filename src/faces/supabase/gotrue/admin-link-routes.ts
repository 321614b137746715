import { type Context, Hono } from "hono";
import { z } from "zod";
import { createUser } from "../../../admin";
import { auditAdminAction } from "../../../audit/admin-action";
import {
  findUserByEmail,
  findUserById,
  type MintedLink,
  mintEmailChangeLink,
  mintLink,
  sendInvitation,
  type TicketType,
  toWireUser,
} from "../../../auth";
import type { UserRow } from "../../../db/schema";
import { AppError } from "../../../errors";
import type { AppEnv } from "../../../http/app-env";
import { metadataSchema } from "../../../lib/json-metadata";
import { requireServiceRole } from "./admin-routes";
import { GoTrueError } from "./errors";
import { allowedRedirect, goTrueLinkForm, type MailType } from "./mail-links";
import { bodyOf } from "./request";
import { goTrueUser } from "./wire";

/**
 * GoTrue's admin links (contract supabase.md §2) for the service role: `inviteUserByEmail` (`POST /invite`: the user
 * made by the admin API's own `createUser`, then an invitation mail in GoTrue's form) and `generateLink` (`POST
 * /admin/generate_link`: the same ticket and code a mail would carry, answered to the operator instead of mailed).
 * Only the address's owner reads a mail; an operator who asks for the link holds it, as GoTrue's operator does.
 */

const invite = z.object({ email: z.email().max(254), data: metadataSchema.nullish() });

const linkRequest = z.object({
  type: z.enum(["signup", "invite", "magiclink", "recovery", "email_change_current", "email_change_new"]),
  email: z.email().max(254),
  password: z.string().min(1).max(1024).nullish(),
  data: metadataSchema.nullish(),
  new_email: z.email().max(254).nullish(),
});

const EMAIL_EXISTS = () =>
  new GoTrueError(422, "email_exists", "A user with this email address has already been registered");

/** The user the admin names, made by the admin API's own creation when new (its rules, its audit event). */
async function userFor(
  c: Context<AppEnv>,
  input: { email: string; password?: string | null; data?: Record<string, unknown> | null },
): Promise<{ user: UserRow; created: boolean }> {
  const { deps } = c.var;
  const existing = await findUserByEmail(deps.shards, input.email);
  if (existing) return { user: existing, created: false };
  const made = await createUser(deps, {
    email: input.email,
    password: input.password ?? undefined,
    emailVerified: false,
    options: { metadata: input.data ?? undefined },
    method: "admin",
  });
  auditAdminAction(c, "user.create", made.id, { email: made.email ?? null });
  const user = await findUserById(deps.shards, made.id);
  if (!user) throw new AppError("internal-server-error", undefined, "a new user was not found");
  return { user, created: true };
}

/** GoTrue's answer: the user, and the link's properties beside it. */
function linkAnswer(user: UserRow, minted: MintedLink, type: string, redirectTo: string) {
  return {
    ...goTrueUser(toWireUser(user)),
    action_link: minted.link,
    email_otp: minted.code ?? "",
    hashed_token: minted.ticket,
    verification_type: type,
    redirect_to: redirectTo,
  };
}

export const goTrueAdminLinkRoutes = new Hono<AppEnv>()
  .post("/invite", async (c) => {
    await requireServiceRole(c);
    const body = await bodyOf(c, invite);
    const { deps, config } = c.var;
    const { user } = await userFor(c, body);
    if (user.emailVerified) throw EMAIL_EXISTS();
    await sendInvitation(deps, user, {
      redirectTo: allowedRedirect(config, c.req.query("redirect_to")),
      form: goTrueLinkForm(config, "invite"),
    });
    return c.json(goTrueUser(toWireUser(user)));
  })
  .post("/admin/generate_link", async (c) => {
    await requireServiceRole(c);
    const body = await bodyOf(c, linkRequest);
    const { deps, config } = c.var;
    const redirectTo = allowedRedirect(config, c.req.query("redirect_to")) ?? config.urls.defaultRedirect;
    if (body.type === "email_change_current") {
      // GoTrue's answer without SECURE_EMAIL_CHANGE_ENABLED: the change is confirmed at the new address only.
      throw new GoTrueError(
        400,
        "validation_failed",
        "Enable secure email change to generate link for current email",
      );
    }
    const needsUser = body.type === "recovery" || body.type === "email_change_new";
    const existing = needsUser ? await findUserByEmail(deps.shards, body.email) : undefined;
    if (needsUser && !existing)
      throw new GoTrueError(404, "user_not_found", "User with this email not found");
    if (body.type === "email_change_new") {
      if (!body.new_email) throw new GoTrueError(400, "validation_failed", "new_email is required");
      const request = { redirectTo, form: goTrueLinkForm(config) };
      const minted = await mintEmailChangeLink(deps, existing!.id, body.new_email, request).catch((error) => {
        throw error instanceof AppError && error.code === "email-already-in-use" ? EMAIL_EXISTS() : error;
      });
      auditAdminAction(c, "user.update", existing!.id, { fields: ["new_email"] });
      return c.json(linkAnswer(existing!, minted, body.type, redirectTo));
    }
    const { user, created } = existing ? { user: existing, created: false } : await userFor(c, body);
    if ((body.type === "signup" || body.type === "invite") && !created && user.emailVerified)
      throw EMAIL_EXISTS();
    // A magic link for an address without an account makes it, and GoTrue calls that link a sign-up's.
    const type: MailType = body.type === "magiclink" && created ? "signup" : body.type;
    const ticket: TicketType =
      type === "recovery" ? "passwordReset" : body.type === "signup" ? "verifyEmail" : "passwordlessEmail";
    const minted = await mintLink(deps, user, ticket, { redirectTo, form: goTrueLinkForm(config, type) });
    return c.json(linkAnswer(user, minted, type, redirectTo));
  });
