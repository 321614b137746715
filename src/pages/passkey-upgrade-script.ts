import { signalsPart } from "./passkey-signals-script";

/**
 * The script of the page between a fresh sign-in and the app (passkey-upgrade.ts), served with a nonce: where the
 * browser says it can (`getClientCapabilities().conditionalCreate`, WebAuthn L3 §5.1.7), a passkey made without a
 * prompt (`mediation: "conditional"`, §5.1.3) through the page's upgrade routes; then the Signal API's calls
 * (./passkey-signals-script.ts); then on to the app, whatever happened, within a few seconds at most: the passkey is
 * a bonus, the sign-in is what the person came for. Nothing from the request is interpolated.
 */
export function passkeyUpgradeScript(): string {
  return `
(() => {
  const data = document.getElementById("passkey-upgrade");
  const target = document.getElementById("continue")?.href;
  if (!data || !target) return;
  const path = data.dataset.upgrade;
  const post = async (url, body) => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error("refused");
    return response.json();
  };
  const upgrade = async () => {
    const P = window.PublicKeyCredential;
    if (!path || !P?.getClientCapabilities || !P.parseCreationOptionsFromJSON) return;
    const capabilities = await P.getClientCapabilities();
    if (!capabilities.conditionalCreate) return;
    const options = await post(path, {});
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 5000);
    try {
      const credential = await navigator.credentials.create({
        publicKey: P.parseCreationOptionsFromJSON(options),
        mediation: "conditional",
        signal: controller.signal,
      });
      await post(path + "/verify", { credential: credential.toJSON() });
      return credential.id;
    } finally {
      clearTimeout(timer);
    }
  };
  const signals = JSON.parse(data.dataset.signals);
  upgrade()
    .then((made) => {
      if (made && signals.allAcceptedCredentialIds) signals.allAcceptedCredentialIds.push(made);
    }, () => {})
    .then(() => {${signalsPart("signals")}
    })
    .finally(() => location.replace(target));
})();`;
}
