import { callHook, type HookDeps } from "../../hooks/call";
import type { SmsSender } from "../sender";

/**
 * The app's `SEND_SMS` hook (contract move-in §5.3) in place of every other transport: a signed POST of
 * `{to, template, locale, code?, user, message: {text}}`. Any 2xx is sent; anything else, or no answer in 5 s, fails
 * the send with 503 `service-unavailable` (src/hooks/call.ts): the app's transport is down, not the number refused.
 */
export function hookSmsSender(deps: HookDeps): SmsSender {
  return {
    async send(to, text, about) {
      const payload = {
        to,
        template: about?.template ?? null,
        locale: about?.locale ?? null,
        ...(about?.code ? { code: about.code } : {}),
        user: about?.user ?? null,
        message: { text },
      };
      const userId = (about?.user as { id?: string } | undefined)?.id ?? null;
      await callHook(deps, "SEND_SMS", payload, () => ({ outcome: "sent", value: null }), userId);
    },
  };
}
