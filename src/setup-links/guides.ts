/**
 * The guides per identity provider (contract operators.md §5): for each, the protocol, where in its console the IT
 * admin makes the app, the names it gives the fields our values go into, and the name of what it gives back. Field
 * and menu names are the IdPs' own (as their English consoles write them), so they are not translated: the sentences
 * around them are (src/browser/text/<lang>/setup-links.ts). docs/setup-links.md has the same guides in prose.
 */

export type GuideId = "okta" | "entra" | "google" | "jumpcloud" | "onelogin" | "saml" | "oidc";

/** Which of our values a field of the IdP takes. */
export type OurValue = "acsUrl" | "entityId" | "metadataUrl" | "nameIdFormat" | "redirectUri" | "signInUrl";

export interface Guide {
  id: GuideId;
  name: string;
  type: "saml" | "oidc";
  /** Where the app is made, in the IdP's console. */
  where: string;
  /** The IdP's field → our value, in the order its form asks. */
  fields: [label: string, value: OurValue][];
  /** What the IdP gives back, by its own name, and which of our fields takes it. */
  giveBack: [label: string, field: "metadataUrl" | "metadataXml" | "issuer" | "clientId" | "clientSecret"][];
}

export const GUIDES: readonly Guide[] = [
  {
    id: "okta",
    name: "Okta",
    type: "saml",
    where: "Admin Console › Applications › Create App Integration › SAML 2.0",
    fields: [
      ["Single sign-on URL", "acsUrl"],
      ["Audience URI (SP Entity ID)", "entityId"],
      ["Name ID format", "nameIdFormat"],
    ],
    giveBack: [["Sign On › Metadata URL", "metadataUrl"]],
  },
  {
    id: "entra",
    name: "Microsoft Entra ID",
    type: "saml",
    where: "Enterprise applications › New application › Create your own application › Single sign-on › SAML",
    fields: [
      ["Identifier (Entity ID)", "entityId"],
      ["Reply URL (Assertion Consumer Service URL)", "acsUrl"],
      ["Sign on URL", "signInUrl"],
    ],
    giveBack: [["SAML Certificates › App Federation Metadata Url", "metadataUrl"]],
  },
  {
    id: "google",
    name: "Google Workspace",
    type: "saml",
    where: "Admin console › Apps › Web and mobile apps › Add app › Add custom SAML app",
    fields: [
      ["ACS URL", "acsUrl"],
      ["Entity ID", "entityId"],
      ["Name ID format (EMAIL)", "nameIdFormat"],
    ],
    giveBack: [["Google Identity Provider details › Download metadata (IdP metadata XML)", "metadataXml"]],
  },
  {
    id: "jumpcloud",
    name: "JumpCloud",
    type: "saml",
    where: "SSO Applications › Add New Application › Custom Application › Manage Single Sign-On (SSO) › SAML",
    fields: [
      ["SP Entity ID", "entityId"],
      ["ACS URLs › Default URL", "acsUrl"],
      ["SAMLSubject NameID format", "nameIdFormat"],
    ],
    giveBack: [["Export Metadata (IdP metadata XML)", "metadataXml"]],
  },
  {
    id: "onelogin",
    name: "OneLogin",
    type: "saml",
    where: "Applications › Add App › SAML Custom Connector (Advanced) › Configuration",
    fields: [
      ["Audience (EntityID)", "entityId"],
      ["Recipient", "acsUrl"],
      ["ACS (Consumer) URL", "acsUrl"],
      ["ACS (Consumer) URL Validator", "acsUrl"],
    ],
    giveBack: [["SSO › Issuer URL", "metadataUrl"]],
  },
  {
    id: "saml",
    name: "SAML 2.0",
    type: "saml",
    where: "your identity provider's new SAML application (or import our metadata URL)",
    fields: [
      ["Assertion Consumer Service (ACS) URL, HTTP-POST", "acsUrl"],
      ["SP Entity ID (Audience)", "entityId"],
      ["SP metadata URL", "metadataUrl"],
      ["NameID format", "nameIdFormat"],
    ],
    giveBack: [
      ["IdP metadata URL", "metadataUrl"],
      ["IdP metadata XML", "metadataXml"],
    ],
  },
  {
    id: "oidc",
    name: "OpenID Connect",
    type: "oidc",
    where: "your identity provider's new web application (authorization code flow, confidential client)",
    fields: [["Redirect URI (sign-in redirect, callback URL)", "redirectUri"]],
    giveBack: [
      ["Issuer (discovery: /.well-known/openid-configuration)", "issuer"],
      ["Client ID", "clientId"],
      ["Client secret", "clientSecret"],
    ],
  },
];

export const guideOf = (id: string | undefined) => GUIDES.find((guide) => guide.id === id);
