/** What GoTrue says of every user, in its tokens and its user object alike. */

/** The audience and role of every user's token (`authenticated`; anonymous users too, with `is_anonymous`). */
export const AUDIENCE = "authenticated";

/** GoTrue's `app_metadata.provider`: how the account was made. */
export function providerOf(user: {
  isAnonymous: boolean;
  email?: string | null;
  phoneNumber?: string | null;
}) {
  if (user.isAnonymous) return "anonymous";
  return !user.email && user.phoneNumber ? "phone" : "email";
}
