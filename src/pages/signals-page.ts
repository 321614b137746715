import { html } from "hono/html";
import { credentialSignals } from "../auth";
import type { Deps } from "../http/deps";
import { signalsPart } from "./passkey-signals-script";

/**
 * The Signal API on a page that shows the account after a change (the account center after a passkey is removed or
 * added, or the name changed: docs/passkeys.md): the element carrying the signals, rendered by the server, and the
 * script that gives them to the browser. Undefined with security keys off or for an impersonation (nothing is
 * signalled for an operator acting as the user: the password manager is the user's own).
 */
export async function signalsOnPage(
  deps: Deps,
  user: Parameters<typeof credentialSignals>[1],
  actor: string | null,
) {
  if (!deps.config.webauthn.enabled || actor) return undefined;
  const signals = JSON.stringify(await credentialSignals(deps, user));
  return {
    element: html`<div id="passkey-signals" data-signals="${signals}" hidden></div>`,
    script: `
(() => {
  const data = document.getElementById("passkey-signals");
  if (!data) return;
  const signals = JSON.parse(data.dataset.signals);
  {${signalsPart("signals")}
  }
})();`,
  };
}
