import { callHook, type HookDeps } from "../../hooks/call";
import type { Mailer } from "../mailer";

/**
 * The app's `SEND_EMAIL` hook (contract move-in §5.3) in place of every other transport: a signed POST of
 * `{to, template, locale, link?, code?, user, message: {subject, text, html}}` (the message as this service would
 * have sent it, for an app that only relays). Any 2xx is sent; anything else, or no answer in 5 s, fails the send
 * with 503 `service-unavailable` (src/hooks/call.ts), so a flow that waits for its mail tells the client.
 */
export function hookMailer(deps: HookDeps): Mailer {
  return {
    async send({ to, subject, text, html, about }) {
      const payload = {
        to,
        template: about?.template ?? null,
        locale: about?.locale ?? null,
        ...(about?.link ? { link: about.link } : {}),
        ...(about?.code ? { code: about.code } : {}),
        user: about?.user ?? null,
        message: { subject, text, html },
        // A face's own fields (the Supabase face: GoTrue's `email_data` with `token`, `token_hash`, `redirect_to`).
        ...about?.faceData,
      };
      const userId = (about?.user as { id?: string } | undefined)?.id ?? null;
      await callHook(deps, "SEND_EMAIL", payload, () => ({ outcome: "sent", value: null }), userId);
    },
  };
}
