import { eq } from "drizzle-orm";
import { type UserRow, users } from "../db/schema";
import { renderTemplate } from "../mail/templates";
import type { Deps } from "./deps";
import { issueTicket } from "./tickets";

/** Sends the `email-verify` mail with a `verifyEmail:` ticket link (contract §8). */
export async function sendVerificationMail(deps: Deps, user: UserRow, redirectTo: string): Promise<void> {
  if (!user.email) return;
  const { config } = deps;
  const ticket = await issueTicket(deps, user.id, "verifyEmail");
  const link = new URL(`${config.AUTH_SERVER_URL}/verify`);
  link.searchParams.set("ticket", ticket);
  link.searchParams.set("type", "emailVerify");
  link.searchParams.set("redirectTo", redirectTo);
  const message = renderTemplate("email-verify", user.locale, config.AUTH_LOCALE_DEFAULT, {
    link: link.toString(),
    displayName: user.displayName,
    email: user.email,
    ticket,
    redirectTo,
    locale: user.locale,
    serverUrl: config.AUTH_SERVER_URL,
    clientUrl: config.AUTH_CLIENT_URL,
  });
  await deps.mailer.send({ to: user.email, ...message });
}

/** The effect of a `verifyEmail:` ticket. Returns the updated user. */
export async function markEmailVerified(deps: Deps, userId: string): Promise<UserRow | undefined> {
  return deps.db
    .update(users)
    .set({ emailVerified: true, updatedAt: deps.now() })
    .where(eq(users.id, userId))
    .returning()
    .get();
}
