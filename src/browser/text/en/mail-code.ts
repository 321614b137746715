/**
 * The line a mail with a link adds when a six-digit code comes with it (the Supabase face's mails carry both, as
 * GoTrue's do): `${code}` is the code.
 */
export const mailCode = {
  text: "Or enter this code: ${code}",
  html: "<p>Or enter this code: <strong>${code}</strong></p>",
};
