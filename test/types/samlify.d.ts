/**
 * The part of samlify the tests' identity provider uses (test/sso/saml-support/idp.ts). samlify's own types pull in
 * an old @xmldom/xmldom whose declarations reference the DOM library, which then fights the Workers types across the
 * whole program (SubtleCrypto, Request, Uint8Array); tsconfig.json's `paths` points the import here instead. At run
 * time the import is samlify itself.
 */
declare module "samlify" {
  interface Endpoint {
    Binding: string;
    Location: string;
  }
  interface Entity {
    getMetadata(): string;
  }
  interface IdentityProviderInstance extends Entity {
    createLoginResponse(
      sp: Entity,
      request: { extract: Record<string, unknown> },
      binding: "post" | "redirect",
      user: Record<string, unknown>,
      options: { customTagReplacement: (template: string) => { id: string; context: string } },
    ): Promise<{ context: string }>;
  }
  export function IdentityProvider(settings: {
    requestSignatureAlgorithm?: string;
    entityID: string;
    signingCert: string;
    privateKey: string;
    isAssertionEncrypted?: boolean;
    singleSignOnService: Endpoint[];
    singleLogoutService?: Endpoint[];
  }): IdentityProviderInstance;
  export function ServiceProvider(settings: {
    entityID: string;
    assertionConsumerService: Endpoint[];
    wantAssertionsSigned?: boolean;
    wantMessageSigned?: boolean;
  }): Entity;
  export function setSchemaValidator(validator: { validate: (xml: string) => Promise<string> }): void;
  export const Constants: { namespace: { binding: { redirect: string; post: string } } };
}
