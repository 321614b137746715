/**
 * The account center's choice of second step (issue 47: TOTP, an email code, a passkey, a texted code), and the
 * hosted page's word when a sign-in's second step is a passkey. Functions take one value.
 */
export const secondStep = {
  title: "Second step",
  lead: "What a sign-in with your password asks for next.",
  current: (name: string) => `Now: ${name}.`,
  none: "nothing (your password alone signs you in)",
  totpFirst:
    "Your authenticator app is the second step while two-step verification is on. Turn it off above to choose another.",
  totp: "a code from your authenticator app",
  email: (email: string) => `A code mailed to ${email}`,
  passkey: "Your passkey or security key",
  sms: "A code texted to your phone",
  off: "Nothing after the password",
  save: "Save",
  emailUnverified: "Your email address is not verified, so it cannot receive the codes.",
  noPasskey: "Add a passkey first to choose it.",
  changed: "Your second step was changed.",
  errors: {
    unverified: "Verify your email address first: an unverified address cannot receive the codes.",
    missing: "You don't have that one yet: add it first.",
  },
  pageEmailLead: "Enter the code we just mailed to you. It is valid for five minutes.",
  pageSmsLead: "Enter the code we just texted to your phone.",
  pagePasskey: "This account's second step is a passkey: sign in with your passkey.",
};

export type SecondStepWords = typeof secondStep;
