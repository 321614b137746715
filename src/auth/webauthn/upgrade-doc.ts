import { z } from "zod";
import type { AnswerDoc } from "../../http/documented";

/**
 * What the API reference says of the passkey upgrade (`POST /user/webauthn/add {upgrade:true}`, upgrade.ts,
 * docs/passkeys.md): the flag's rules and the error answers of the two calls of the ceremony. Kept beside the rules'
 * code so the reference changes with them.
 */

export const upgradeFlag = z
  .boolean()
  .optional()
  .describe(
    'A passkey upgrade: options for `navigator.credentials.create({ mediation: "conditional" })` (WebAuthn L3 ' +
      "§5.1.3), which a password manager answers without a prompt. Allowed once per session, within 5 minutes of " +
      "the session's first-factor sign-in (a password, a mailed link or a code, or the TOTP or SMS step after one), " +
      "never from a passkey's, a provider's, a personal access token's or an impersonation's session. The key is " +
      "discoverable; user presence 0 is accepted for it (and only for it); the user is mailed; its sign-ins are not " +
      "phishing-resistant (`phr`) until it is used with user verification.",
  );

/** The rules, in the operation's description. */
export const UPGRADE_DESCRIPTION =
  'With `upgrade: true`, a passkey upgrade (`mediation: "conditional"` on create, docs/passkeys.md): once per ' +
  "session, within 5 minutes of its password, link or code sign-in; the user is mailed (a mail that cannot be sent " +
  "is logged, the key stays); user presence 0 is accepted only here; the key is not phishing-resistant (`phr`) until " +
  "used with user verification. Finish at `POST /user/webauthn/verify` from the same session, within the same " +
  "5 minutes. A refused upgrade is 403 `forbidden`, its message naming the rule (the access token names no session, " +
  "the session has ended, did not begin with a password, a link or a code, more than 5 minutes after the sign-in, " +
  "this session already made its passkey, an impersonated session).";

const errorOf = (status: number, codes: [string, ...string[]]) =>
  z.object({ status: z.literal(status), message: z.string(), error: z.enum(codes) });

/** The error answers of `POST /user/webauthn/add` (the options). */
export const addErrorAnswers: Record<number, AnswerDoc> = {
  400: {
    description: "`invalid-request`: the body is not `{}` or `{upgrade: boolean}`.",
    schema: errorOf(400, ["invalid-request"]),
  },
  401: {
    description: "`unauthorized`: no valid access token, or (not an upgrade) an elevation is required.",
    schema: errorOf(401, ["unauthorized"]),
  },
  403: {
    description: "`forbidden`: an upgrade refused by one of its rules (the message names it).",
    schema: errorOf(403, ["forbidden"]),
    example: {
      status: 403,
      message: "passkey upgrade refused: more than 5 minutes after the sign-in",
      error: "forbidden",
    },
  },
};

/** The error answers of `POST /user/webauthn/verify` (the new key). */
export const verifyErrorAnswers: Record<number, AnswerDoc> = {
  400: {
    description:
      "`invalid-request`: the credential does not verify: among others user presence 0 outside an upgrade, or an " +
      "upgrade's challenge answered from another session.",
    schema: errorOf(400, ["invalid-request"]),
  },
  403: {
    description:
      "`forbidden`: an upgrade's rule no longer holds at the ceremony's end (the 5 minutes passed, or this session " +
      "made its passkey meanwhile).",
    schema: errorOf(403, ["forbidden"]),
  },
};
