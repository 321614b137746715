// Links Supabase mailed before the move and nobody followed yet: GoTrue keeps each as `token_hash` = hex SHA-224 of
// the address and the code (internal/crypto `GenerateTokenHash`), `pkce_` before it when the app asked under PKCE,
// in auth.one_time_tokens (since 2024) and in the user's own columns (confirmation_token, recovery_token,
// email_change_token_new/_current), which it checks at /verify against `<kind>_sent_at` + the mailer's OTP lifetime
// (`GOTRUE_MAILER_OTP_EXP`, 86400 s unless set). The link carries that hash as `token`, an app's own page passes it
// as `verifyOtp({ token_hash })`: carried as a ticket of the core's kind, `<kind>:<hash>`, the Supabase face takes it
// (src/faces/supabase/gotrue/imported-links.ts).
import { iso } from "../import-nhost/user-bundles.mjs";

/** GoTrue's default `MAILER_OTP_EXP`, in seconds. */
export const GOTRUE_OTP_EXPIRY = 86_400;

const HASH = /^(?:pkce_)?([0-9a-f]{56})$/;

/**
 * The pending links of one user: `{ticket, expiresAt}` (at most one: the core keeps one link of a user at a time
 * through the wire), and what is left out with why. `tokens`: its auth.one_time_tokens rows, or null when the table
 * does not exist (older GoTrue: the columns of the user's row alone).
 */
export function pendingLinks(user, tokens, { now, otpExpiry = GOTRUE_OTP_EXPIRY }) {
  const kinds = [
    {
      type: "confirmation_token",
      ticket: "verifyEmail",
      column: user.confirmation_token,
      sentAt: user.confirmation_sent_at,
    },
    {
      type: "recovery_token",
      ticket: "passwordReset",
      column: user.recovery_token,
      sentAt: user.recovery_sent_at,
    },
    {
      type: "email_change_token_new",
      ticket: "emailConfirmChange",
      column: user.email_change_token_new ?? user.email_change_token,
      sentAt: user.email_change_sent_at,
    },
  ];
  const leftOut = [];
  const live = [];
  for (const kind of kinds) {
    // GoTrue checks a link against the user's column; one_time_tokens is how it finds the user. Both must hold it.
    const listed =
      tokens === null || tokens.some((t) => t.token_type === kind.type && t.token_hash === kind.column);
    const hash = kind.column ? HASH.exec(kind.column)?.[1] : undefined;
    if (!kind.column || !listed) continue;
    if (!hash) {
      leftOut.push(`${kind.type} in an unknown format: not carried`);
      continue;
    }
    const sent = kind.sentAt ? new Date(kind.sentAt).getTime() : Number.NaN;
    const expiresAt = sent + otpExpiry * 1000;
    if (!Number.isFinite(expiresAt) || expiresAt <= now) {
      leftOut.push(`${kind.type} expired: not needed`);
      continue;
    }
    if (kind.type === "email_change_token_new" && !emailChangeConfirmable(user)) {
      leftOut.push(
        "email change awaiting both addresses' confirmation (secure email change): asked again here, not carried",
      );
      continue;
    }
    live.push({ ticket: `${kind.ticket}:${hash}`, expiresAt, sent, type: kind.type });
  }
  for (const token of tokens ?? [])
    if (
      ["reauthentication_token", "phone_change_token", "email_change_token_current"].includes(
        token.token_type,
      )
    )
      leftOut.push(`${token.token_type}: a code the user asks for again, not carried`);
  live.sort((a, b) => b.sent - a.sent);
  const [chosen, ...older] = live;
  for (const link of older)
    leftOut.push(
      `${link.type}: an older link than the user's last one, which is carried (one pending link a user)`,
    );
  return {
    ticket: chosen?.ticket ?? null,
    ticketExpiresAt: chosen ? iso(chosen.expiresAt) : null,
    leftOut,
  };
}

/**
 * An email change GoTrue completes on the new address's link alone: no link to the current address (GoTrue's single
 * confirmation), or that one already followed (`email_change_confirm_status` 1). Otherwise the new address's link
 * alone would skip the old address's consent, which GoTrue asked for: not carried.
 */
function emailChangeConfirmable(user) {
  return !user.email_change_token_current || Number(user.email_change_confirm_status ?? 0) >= 1;
}
