/**
 * The Signal API's calls (WebAuthn L3 §5.1.10), a part of the pages' scripts: `variable` names an object shaped as
 * src/auth/webauthn/signals.ts `CredentialSignals`, rendered by the server. Each call is feature-detected and its
 * failure ignored (a signal is advice to the password manager). `signalAllAcceptedCredentials` only when the list is
 * there, which the server gives only when it is complete for the RP ID: a partial list would make the password
 * manager delete a working passkey. Never on an impersonation's page: the server renders no signals there.
 */
export function signalsPart(variable: string): string {
  return `
      const P = window.PublicKeyCredential;
      const s = ${variable};
      if (s.allAcceptedCredentialIds && P?.signalAllAcceptedCredentials) {
        P.signalAllAcceptedCredentials({
          rpId: s.rpId,
          userId: s.userId,
          allAcceptedCredentialIds: s.allAcceptedCredentialIds,
        }).catch(() => {});
      }
      if (P?.signalCurrentUserDetails) {
        P.signalCurrentUserDetails({
          rpId: s.rpId,
          userId: s.userId,
          name: s.name,
          displayName: s.displayName,
        }).catch(() => {});
      }`;
}
