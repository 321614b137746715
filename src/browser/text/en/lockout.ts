/**
 * A locked sign-in factor (contract §13, docs/protection.md "Lockout"): the mail to the account's owner, with the link
 * that unlocks it, and the page that link lands on (src/auth/lockout/unlock-routes.ts). The mail's placeholders:
 * `${displayName}`, `${method}` (one of `methods`, as it reads after "with"), `${duration}` (from `duration`),
 * `${link}`; `${minutes}` is also given, for a deployer's own template (AUTH_EMAIL_TEMPLATES).
 */
export const lockout = {
  mail: {
    subject: "Signing in to your account is paused",
    text: "Hello ${displayName},\n\nThere were too many failed attempts to sign in to your account with ${method}, so signing in that way is paused for ${duration}.\n\nIf it was you, open this link to unlock it now:\n${link}\n\nIf it was not you, someone may be trying to get into your account. Nothing was changed. Choose a strong password that you use nowhere else.\n",
    html: '<p>Hello ${displayName},</p><p>There were too many failed attempts to sign in to your account with ${method}, so signing in that way is paused for ${duration}.</p><p>If it was you, <a href="${link}">unlock it now</a>.</p><p>If it was not you, someone may be trying to get into your account. Nothing was changed. Choose a strong password that you use nowhere else.</p>',
  },
  /** Each factor as it reads in the mail's sentence. */
  methods: {
    password: "your password",
    "email-otp": "a code sent by email",
    "sms-otp": "a code sent by text message",
    totp: "a code from your authenticator app",
    "recovery-code": "a recovery code",
  },
  duration: {
    minutes: (count: number) => `${count} minutes`,
    hour: "1 hour",
    hours: (count: number) => `${count} hours`,
  },
  page: {
    title: "Unlock signing in",
    lead: "After too many failed attempts, signing in to your account with one method was paused. If the attempts were yours, unlock it now.",
    unlock: "Unlock",
    doneTitle: "Signing in is unlocked",
    doneLead: "You can sign in again.",
    toApp: "Continue to the app",
    failedTitle: "This link no longer works",
    failedLead:
      "It was already used, or it is more than a day old. If signing in is still paused, wait until the pause ends.",
    incomplete: "This link is incomplete. Open it exactly as it was in the mail.",
    otherSite: "This form was sent from another site, so nothing was changed.",
    unavailable: "Unlocking is not possible right now. Try again in a moment.",
  },
};

export type Lockout = typeof lockout;
