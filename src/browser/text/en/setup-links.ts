/**
 * The setup link's pages (contract operators.md §5): what a customer's IT admin reads while setting up their
 * organization's domains, SSO connection and SCIM provisioning, and the mail the org's owners get when a connection
 * is ready to enable. Names of IdPs and of their fields stay as the IdPs write them (src/setup-links/guides.ts).
 */
export const setupLinks = {
  title: (org: string) => `Set up sign-in for ${org}`,
  lead: "This link lets you, as the IT administrator, connect your organization's identity provider. Nothing you do here takes effect until an owner of the organization turns it on.",
  expires: (date: string) => `This link works until ${date}.`,
  gone: "This setup link does not work: it is mistyped, expired or revoked. Ask the person who sent it for a new one.",
  goneTitle: "Setup link not valid",
  tooMany: (seconds: number) => `Too many attempts from your network. Try again in ${seconds} seconds.`,
  notAllowed: "This setup link does not include this step.",
  otherSite: "This form was sent from another site. Open the setup link again and use the form on its page.",
  back: "Back to the overview",
  steps: "Steps",
  stepDomains: "Verify your email domains",
  stepSso: "Connect single sign-on",
  stepScim: "Provision users with SCIM",
  done: "Done",
  todo: "To do",
  // Domains
  domainsLead:
    "Prove that your organization owns an email domain by adding a DNS TXT record. Single sign-on set up here serves only the domains verified on this page.",
  domainLabel: "Email domain",
  addDomain: "Add the domain",
  txtName: "TXT record name",
  txtValue: "TXT record value",
  checkDomain: "Check the record",
  verified: "Verified",
  notVerified: "Not verified yet",
  domainChecked: (domain: string) => `${domain} is verified.`,
  domainNotFound: (domain: string) =>
    `The TXT record for ${domain} was not found yet. DNS changes can take a few minutes; check again later.`,
  dnsUnavailable: "The DNS lookup did not answer just now. Nothing was changed: check again in a minute.",
  domainVerifiedBefore: (domain: string) =>
    `${domain} was verified for this organization already, outside this link. An owner of the organization decides whether your connection serves it.`,
  domainRefused: (domain: string) =>
    `${domain} can't be added: it is a public mail domain, not a domain name, or verified by another organization.`,
  // SSO
  ssoLead:
    "Choose your identity provider: the guide gives the exact values to paste into it, and asks for what it gives back.",
  chooseIdp: "Identity provider",
  start: "Start",
  connections: "Connections set up through this link",
  noConnections: "None yet.",
  inactive: "Not active: an owner turns it on after a successful test",
  active: "Active",
  guideTitle: (idp: string) => `Connect ${idp}`,
  inYourIdp: (idp: string) => `In ${idp}`,
  pasteThese: "Paste these values:",
  giveBack: "Then give back what it shows you:",
  metadataUrl: "IdP metadata URL",
  metadataXml: "Or the IdP metadata XML",
  issuer: "Issuer URL (its discovery document is at /.well-known/openid-configuration under it)",
  clientId: "Client ID",
  clientSecret: "Client secret",
  create: "Save the connection",
  noDomainsYet:
    "Verify a domain first: the connection will serve only the domains verified through this link.",
  connectionTitle: (type: string) => `${type} connection`,
  valuesToPaste: "Values for your identity provider",
  test: "Test the connection",
  testLead:
    "Sign in at your identity provider with an account of a verified domain. Nobody is signed in here: the test only checks the answer.",
  testNone: "Not tested yet.",
  testOk: (email: string) =>
    `The test succeeded: your identity provider vouched for ${email}. The organization's owners were told it is ready to turn on.`,
  testFailed: (why: string) => `The last test failed: ${why}`,
  testWhy: {
    "sso-email-outside-domains": "the email it asserted is not in a domain verified through this link.",
    "sso-assertion-invalid": "its answer could not be verified (signature, audience or time).",
    "invalid-state": "the test was not started in this browser, or took too long. Start it again.",
    other: "the identity provider's answer was refused.",
  },
  // SCIM
  scimLead:
    "Your identity provider creates, updates and deactivates your people here. A token made on this page can't make anyone an owner or administrator of the organization.",
  scimBaseUrl: "SCIM base URL",
  scimToken: "Bearer token",
  scimTokenOnce: "Copy the token now: it is shown only once.",
  makeToken: "Make a SCIM token",
  tokens: "Tokens made through this link",
  noTokens: "None yet.",
  lastUsed: (date: string) => `Your identity provider last called at ${date}.`,
  neverUsed: "Your identity provider has not called yet: run its connection test, then check here.",
  checkAgain: "Check again",
  made: (date: string) => `Made ${date}`,
  // The mail to the org's owners
  readyMail: {
    subject: "A sign-in connection for ${orgName} is ready to turn on",
    text: "Hello ${displayName},\n\nYour IT administrator set up a ${type} connection for ${orgName} through a setup link, and its test succeeded (the identity provider vouched for ${email}).\n\nIt stays off until an owner turns it on. Connection: ${connectionId}.\n${link}\n",
    html: '<p>Hello ${displayName},</p><p>Your IT administrator set up a ${type} connection for <strong>${orgName}</strong> through a setup link, and its test succeeded (the identity provider vouched for ${email}).</p><p>It stays off until an owner turns it on. Connection: ${connectionId}.</p><p><a href="${link}">Open the app</a></p>',
  },
};

export type SetupLinks = typeof setupLinks;
