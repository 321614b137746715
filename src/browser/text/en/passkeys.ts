/**
 * Passkeys by default (docs/passkeys.md). The mail of an upgrade: a passkey the browser's password manager made right
 * after a sign-in, without asking. Placeholders: `${displayName}`, `${time}`, `${link}` (the account center's
 * passkeys, where it is removed). Then the hosted sign-up page's passkey-only sign-up.
 */
export const passkeys = {
  mail: {
    subject: "A passkey was added to your account",
    text: "Hello ${displayName},\n\nYour password manager made a passkey for your account after you signed in, at ${time}. Next time you can sign in with it instead of your password.\n\nIf it was not you, remove the passkey and change your password:\n${link}\n",
    html: '<p>Hello ${displayName},</p><p>Your password manager made a passkey for your account after you signed in, at ${time}. Next time you can sign in with it instead of your password.</p><p>If it was not you, <a href="${link}">remove the passkey</a> and change your password.</p>',
  },
  signUp: "Sign up with a passkey",
  signUpProblem: "The passkey could not be made. Try again, or sign up with a password.",
  signUpMailed:
    "Check your email: follow the link we sent to finish your sign-up, then sign in with your passkey.",
};

export type Passkeys = typeof passkeys;
