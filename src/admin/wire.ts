import { z } from "zod";
import { ACTOR_KINDS } from "../audit/actor";
import { wireUserSchema } from "../auth";
import { SIGNING_ALGORITHMS } from "../lib/key-algorithms";

/**
 * The admin API's resources (contract §10), as schemas: the types the code returns are inferred from them, and the
 * OpenAPI document shows them, so the two cannot differ.
 */

/** A user as the admin API shows it in lists: the User resource plus what only an operator sees. */
export const adminUserSchema = wireUserSchema.extend({
  disabled: z.boolean(),
  lastSeen: z.iso.datetime().nullable(),
});
export type AdminUser = z.infer<typeof adminUserSchema>;

/** `GET /admin/users/{id}`: the list item plus the user's sign-in methods. */
export const adminUserDetailSchema = adminUserSchema.extend({
  providers: z.array(
    z.object({ provider: z.string(), providerUserId: z.string(), createdAt: z.iso.datetime() }),
  ),
  securityKeys: z.array(
    z.object({ id: z.string(), nickname: z.string().nullable(), createdAt: z.iso.datetime() }),
  ),
});
export type AdminUserDetail = z.infer<typeof adminUserDetailSchema>;

export const adminSessionSchema = z.object({
  id: z.uuid(),
  createdAt: z.iso.datetime(),
  lastUsedAt: z.iso.datetime(),
  expiresAt: z.iso.datetime(),
  userAgent: z.string().nullable(),
});
export type AdminSession = z.infer<typeof adminSessionSchema>;

export const auditEventSchema = z.object({
  id: z.string(),
  at: z.iso.datetime(),
  type: z.string().describe("signin.success, signin.failure, signup, password.change, admin.*, …"),
  userId: z.string().optional().describe("The subject: the user the event concerns."),
  actor: z
    .object({ type: z.enum(ACTOR_KINDS), name: z.string().optional() })
    .describe("Who acted: the operator's, impersonator's, Worker's or SCIM organization's name when known."),
  outcome: z.enum(["success", "failure"]),
  reason: z.string().describe("A reason code: a failure's error, a sign-in's method, else the type."),
  ip: z.string().optional(),
  userAgent: z.string().optional(),
  detail: z.record(z.string(), z.unknown()),
});
export type WireAuditEvent = z.infer<typeof auditEventSchema>;

export const adminKeySchema = z.object({
  kid: z.string(),
  kty: z.enum(["RSA", "EC", "OKP"]),
  alg: z.enum(SIGNING_ALGORITHMS),
  use: z.string(),
  /** RSA keys. */
  n: z.string().optional(),
  e: z.string().optional(),
  /** EC (`P-256`, with `y`) and OKP (`Ed25519`) keys. */
  crv: z.string().optional(),
  x: z.string().optional(),
  y: z.string().optional(),
  /** Whether it signs OpenID Connect ID tokens (RS256 while another algorithm signs access tokens). */
  signsIdTokens: z.boolean(),
  /** Null for a key configured in `AUTH_JWT_PRIVATE_KEYS`: the service does not know when it was made. */
  createdAt: z.iso.datetime().nullable(),
  status: z.enum(["signing", "published"]),
  /** `config`: from the secret, listed but not deletable here; `admin`: created by a rotation, stored encrypted. */
  source: z.enum(["config", "admin"]),
});
export type AdminKey = z.infer<typeof adminKeySchema>;
