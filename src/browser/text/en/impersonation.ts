/**
 * Impersonation (contract operators.md §1): the banner on the hosted pages and the account center while someone acts
 * as the user, the session list's label, and the mail after it ended. Placeholders: `${displayName}`, `${actor}` (who
 * acted, as they named themself), `${reason}`, `${start}` and `${end}` (times), `${link}` (the account center).
 */
export const impersonation = {
  /** The banner: who is acting as the user, on every page of the session. */
  banner: (actor: string) =>
    `${actor} is acting as this user (impersonation). Nothing can be granted or changed here.`,
  /** The session list's mark on such a session. */
  /** The account center's one line above its forms, shown read-only while someone acts as the user. */
  readOnly:
    "Read-only: while support acts as this user, the account's settings can be looked at but not changed; the user changes them in their own session.",
  sessionLabel: (actor: string) => `Impersonated by ${actor}`,
  mail: {
    subject: "Someone from support acted as you",
    text: "Hello ${displayName},\n\n${actor} acted as you from ${start} to ${end}, for this reason: ${reason}\n\nNothing could be granted or changed in your account during that time. Your sessions are listed here:\n${link}\n",
    html: '<p>Hello ${displayName},</p><p>${actor} acted as you from ${start} to ${end}, for this reason: ${reason}</p><p>Nothing could be granted or changed in your account during that time. <a href="${link}">See your sessions</a>.</p>',
  },
};

export type Impersonation = typeof impersonation;
