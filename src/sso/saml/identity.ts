import type { SsoIdentity } from "../requests";
import type { SamlAssertion } from "./verify-response";

/**
 * The person a verified assertion names, in the sso core's terms. IdPs spell the same attribute several ways: the
 * plain names Okta and Google use, Entra ID's and ADFS's claim URIs, and the LDAP OIDs of the SAML 2.0 attribute
 * profiles (urn:oid:…). The first present wins.
 */
export const EMAIL_ATTRIBUTES = [
  "email",
  "mail",
  "emailAddress",
  "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress",
  "urn:oid:0.9.2342.19200300.100.1.3",
];
const DISPLAY_NAME = [
  "displayName",
  "name",
  "http://schemas.microsoft.com/identity/claims/displayname",
  "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name",
  "urn:oid:2.16.840.1.113730.3.1.241",
];
const GIVEN_NAME = [
  "firstName",
  "givenName",
  "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname",
];
const SURNAME = [
  "lastName",
  "surname",
  "sn",
  "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname",
];
const GROUPS = ["groups", "memberOf", "http://schemas.microsoft.com/ws/2008/06/identity/claims/groups"];

const EMAIL_FORMAT = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress";
const LOOKS_LIKE_EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function first(attributes: Record<string, string[]>, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = attributes[name]?.find((candidate) => candidate.length > 0);
    if (value) return value;
  }
  return undefined;
}

/** `undefined` when the assertion names no email address at all (refused by the caller). */
export function identityOf(assertion: SamlAssertion): SsoIdentity | undefined {
  const { attributes, nameId, nameIdFormat } = assertion;
  const email =
    (nameIdFormat === EMAIL_FORMAT ? nameId : undefined) ??
    first(attributes, EMAIL_ATTRIBUTES) ??
    (LOOKS_LIKE_EMAIL.test(nameId) ? nameId : undefined);
  if (!email || !LOOKS_LIKE_EMAIL.test(email)) return undefined;
  const given = first(attributes, GIVEN_NAME);
  const surname = first(attributes, SURNAME);
  const displayName =
    first(attributes, DISPLAY_NAME) ?? ([given, surname].filter(Boolean).join(" ") || undefined);
  const groups = GROUPS.flatMap((name) => attributes[name] ?? []).filter((group) => group.length > 0);
  return {
    subject: nameId,
    email: email.toLowerCase(),
    ...(displayName ? { displayName: displayName.slice(0, 200) } : {}),
    ...(groups.length > 0 ? { groups: [...new Set(groups)].slice(0, 200) } : {}),
  };
}
