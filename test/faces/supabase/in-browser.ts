import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/server";
import type { SoftwareAuthenticator } from "../../fakes/authenticator";

/**
 * What a browser gives auth-js's `mfa.webauthn` (as mfa-webauthn.test.ts and passkeys.test.ts set it up): `window`,
 * `PublicKeyCredential`, `navigator.credentials`, answered by a software authenticator, for the time of `work`.
 */
export async function inBrowser<T>(device: SoftwareAuthenticator, work: () => Promise<T>): Promise<T> {
  class PublicKeyCredential {
    constructor(private readonly json: unknown) {}
    toJSON() {
      return this.json;
    }
    static parseCreationOptionsFromJSON = (options: unknown) => options;
    static parseRequestOptionsFromJSON = (options: unknown) => options;
  }
  const credentials = {
    create: async ({ publicKey }: { publicKey: PublicKeyCredentialCreationOptionsJSON }) =>
      new PublicKeyCredential(await device.create(publicKey)),
    get: async ({ publicKey }: { publicKey: PublicKeyCredentialRequestOptionsJSON }) =>
      new PublicKeyCredential(await device.get(publicKey)),
  };
  const scope = globalThis as Record<string, unknown>;
  Object.assign(scope, { window: globalThis, document: {}, PublicKeyCredential });
  Object.defineProperty(navigator, "credentials", { value: credentials, configurable: true });
  try {
    return await work();
  } finally {
    delete scope.window;
    delete scope.document;
    delete scope.PublicKeyCredential;
    Reflect.deleteProperty(navigator, "credentials");
  }
}
