import { z } from "zod";
import type { OrganizationRow, OrgInvitationRow, OrgMemberRow } from "../db/schema";
import { emailField } from "../http/fields";
import { metadataSchema } from "../lib/json-metadata";

/** The organizations' resources and request bodies as the API shows them (contract organizations.md §1). */

/** Lower-case letters, digits and single dashes, 2–48 characters, starting and ending with a letter or digit. */
export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){1,47}$/;

export const slugField = z
  .string()
  .regex(SLUG_PATTERN, "2–48 lower-case letters, digits and single dashes, not at either end")
  .describe("Unique; lower-case letters, digits and dashes. Generated from the name when absent.");

const nameField = z.string().trim().min(1).max(100);
/** A role's name: the built-in three or one of `AUTH_ORG_ROLES` (checked against the configuration in the service). */
const roleField = z
  .string()
  .min(1)
  .max(64)
  .describe("`owner`, `admin`, `member`, or a role of `AUTH_ORG_ROLES`");

export const orgSchema = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  createdAt: z.iso.datetime(),
});
export type WireOrg = z.infer<typeof orgSchema>;

/** An organization as one of its members sees it in `GET /orgs`: with the member's role. */
export const myOrgSchema = orgSchema.extend({ role: z.string() });

export const memberSchema = z.object({
  userId: z.string(),
  role: z.string(),
  active: z.boolean().describe("False once SCIM deactivated the membership"),
  source: z.string().describe("`creator`, `invitation`, `admin`, `scim` or `jit`"),
  email: z.string().nullable(),
  displayName: z.string().nullable(),
  createdAt: z.iso.datetime(),
});
export type WireMember = z.infer<typeof memberSchema>;

export const invitationSchema = z.object({
  id: z.string(),
  email: z.string(),
  role: z.string(),
  invitedBy: z.string().nullable(),
  createdAt: z.iso.datetime(),
  expiresAt: z.iso.datetime(),
});

export const createOrgBody = z.strictObject({
  name: nameField,
  slug: slugField.optional(),
  metadata: metadataSchema.optional(),
});
export const updateOrgBody = z.strictObject({
  name: nameField.optional(),
  slug: slugField.optional(),
  metadata: metadataSchema.optional(),
});
/** The admin API's create: the owner is named, since no session makes the org. */
export const adminCreateOrgBody = createOrgBody.extend({
  ownerUserId: z.uuid().describe("The user who becomes the organization's first owner"),
});
export const memberRoleBody = z.strictObject({ role: roleField });
export const adminAddMemberBody = z.strictObject({ userId: z.uuid(), role: roleField });
export const inviteBody = z.strictObject({ email: emailField, role: roleField.default("member") });
export const acceptBody = z.strictObject({ ticket: z.string().min(1).max(200) });

export function toWireOrg(row: OrganizationRow): WireOrg {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    metadata: row.metadata,
    createdAt: new Date(row.createdAt).toISOString(),
  };
}

export function toWireMember(
  row: OrgMemberRow,
  user: { email: string | null; displayName: string } | undefined,
): WireMember {
  return {
    userId: row.userId,
    role: row.role,
    active: row.active,
    source: row.source,
    email: user?.email ?? null,
    displayName: user?.displayName ?? null,
    createdAt: new Date(row.createdAt).toISOString(),
  };
}

export function toWireInvitation(row: OrgInvitationRow) {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    invitedBy: row.invitedBy,
    createdAt: new Date(row.createdAt).toISOString(),
    expiresAt: new Date(row.expiresAt).toISOString(),
  };
}
