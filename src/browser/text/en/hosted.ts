/**
 * The hosted sign-in of a first-party app (`{prefix}/signin`, `/signup`, `/reset`, contract §13): what the page says
 * instead of "to continue to <client>". `name` is the brand name, or else the app's host.
 */
export const hosted = {
  signInLead: (name: string) => `Sign in to continue to ${name}.`,
  signUpLead: (name: string) => `Create your account to continue to ${name}.`,
  /** When the way back is this service's own account center. */
  accountSignInLead: "Sign in to manage your account.",
  accountSignUpLead: "Create your account. You can manage it here afterwards.",
  /** A problem page: the app asked to be sent back to an address that is not allowed. */
  redirectNotAllowed:
    "This sign-in link cannot be used: the address to return to afterwards is not one this service may send you to. Go back to the app and try again.",
  /** A problem page: a sign-in link with a `prompt` other than `login`. */
  promptNotSupported: "This sign-in link is not valid: the only prompt it may ask for is “login”.",
  /** A problem page: the same sign-in completed a second time (another tab, the back button). */
  completedAlready:
    "This sign-in was completed already. Go back to the app; if you are not signed in there, sign in again from it.",
};

export type Hosted = typeof hosted;
