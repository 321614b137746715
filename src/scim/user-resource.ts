import { z } from "zod";
import type { OrgMemberRow } from "../db/schema";
import { ScimError } from "./errors";
import { USER_SCHEMA } from "./schemas";

/**
 * A SCIM User (RFC 7643 §4.1) as this service keeps it: the service's user (its email is `userName`) plus its
 * membership of the organization (`active`, `externalId`, and the attributes the IdP sent, kept as it sent them).
 */

export interface UserFacts {
  id: string;
  email: string | null;
  displayName: string;
  createdAt: number;
  updatedAt: number;
}

/** Attributes the service owns or derives; never taken from the IdP's copy (`password` is never stored at all). */
const RESERVED = new Set(["schemas", "id", "meta", "username", "externalid", "active", "password", "groups"]);
/** How much an IdP may store per member, JSON: enough for every RFC 7643 attribute and Entra's extension. */
const MAX_ATTRIBUTES_BYTES = 16 * 1024;

/**
 * How deep the kept attributes may nest: RFC 7643's deepest (an extension's complex attribute's sub-attribute inside
 * a multi-valued list) is four levels; a deeper tree is no SCIM resource, only work for every later read.
 */
const MAX_DEPTH = 6;

function depthOf(value: unknown, limit: number): number {
  if (typeof value !== "object" || value === null || limit < 0) return 0;
  let deepest = 0;
  for (const item of Object.values(value)) deepest = Math.max(deepest, depthOf(item, limit - 1));
  return deepest + 1;
}

/** `"True"`, `"false"` (Entra sends strings), or booleans. */
const scimBoolean = z.preprocess(
  (value) =>
    typeof value === "string" && /^(true|false)$/i.test(value) ? value.toLowerCase() === "true" : value,
  z.boolean(),
);

/** What a POST or PUT carries (and what a PATCH must leave): `userName` an email, other attributes as sent. */
export const userInputSchema = z.looseObject({
  schemas: z.array(z.string()).optional(),
  userName: z.string().trim().min(1).max(254),
  externalId: z.string().max(255).nullish(),
  active: scimBoolean.optional(),
  displayName: z.string().max(500).nullish(),
  name: z
    .looseObject({
      formatted: z.string().max(500).nullish(),
      givenName: z.string().max(200).nullish(),
      familyName: z.string().max(200).nullish(),
    })
    .nullish(),
  emails: z
    .array(z.looseObject({ value: z.string().max(254).nullish() }))
    .max(20)
    .nullish(),
});
export type UserInput = z.infer<typeof userInputSchema>;

export function parseUserInput(body: unknown): UserInput {
  const result = userInputSchema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.map(String).join(".") || "body";
  throw new ScimError(400, `${field}: ${issue.message}`, "invalidValue");
}

/** The address a User names: its `userName`, which must be an email (docs/scim.md). */
export function emailOf(input: UserInput): string {
  const email = input.userName.toLowerCase();
  if (!z.email().safeParse(email).success)
    throw new ScimError(400, "userName: must be the user's email address", "invalidValue");
  return email;
}

/** The attributes kept as the IdP sent them: everything but what the service owns. */
export function storedAttributes(input: UserInput): Record<string, unknown> {
  const kept = Object.fromEntries(
    Object.entries(input).filter(([key, value]) => !RESERVED.has(key.toLowerCase()) && value !== null),
  );
  if (depthOf(kept, MAX_DEPTH + 1) > MAX_DEPTH)
    throw new ScimError(400, `the user's attributes nest deeper than ${MAX_DEPTH} levels`, "invalidValue");
  if (JSON.stringify(kept).length > MAX_ATTRIBUTES_BYTES)
    throw new ScimError(400, `the user's attributes exceed ${MAX_ATTRIBUTES_BYTES} bytes`, "invalidValue");
  return kept;
}

/** The name people see: `displayName`, else `name.formatted`, else given and family names. */
export function displayNameOf(input: UserInput): string | undefined {
  const name = input.name;
  const joined = [name?.givenName, name?.familyName].filter(Boolean).join(" ");
  return input.displayName || name?.formatted || joined || undefined;
}

export function userLocation(serverUrl: string, id: string): string {
  return `${serverUrl}/scim/v2/Users/${id}`;
}

/** The resource as answered. */
export function toScimUser(
  serverUrl: string,
  member: OrgMemberRow,
  user: UserFacts,
  groups: { id: string; displayName: string }[] = [],
): Record<string, unknown> {
  const attributes = member.scimAttributes ?? {};
  const email = user.email ?? "";
  const lastModified = Math.max(member.updatedAt, user.updatedAt);
  const extensions = Object.keys(attributes).filter((key) => /^urn:/i.test(key));
  return {
    ...(attributes.displayName === undefined && user.displayName ? { displayName: user.displayName } : {}),
    ...(attributes.emails === undefined && email
      ? { emails: [{ value: email, type: "work", primary: true }] }
      : {}),
    ...attributes,
    schemas: [USER_SCHEMA, ...extensions],
    id: user.id,
    ...(member.externalId !== null ? { externalId: member.externalId } : {}),
    userName: email,
    active: member.active,
    ...(groups.length > 0
      ? { groups: groups.map((group) => ({ value: group.id, display: group.displayName, type: "direct" })) }
      : {}),
    meta: {
      resourceType: "User",
      created: new Date(member.createdAt).toISOString(),
      lastModified: new Date(lastModified).toISOString(),
      location: userLocation(serverUrl, user.id),
      version: `W/"${lastModified}"`,
    },
  };
}
