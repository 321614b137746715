import { z } from "zod";
import type { SetupLinkRow } from "../db/schema";
import type { Deps } from "../http/deps";
import { connectionSchema, connectionsOfLink, toWireConnection } from "../sso";
import { tokensOfLink } from "./actions";

/**
 * A setup link as its org's owners (and the operator) see it: what it may do, whether it still works, and what the
 * IT admin did with it so far (contract operators.md §5: "the org owner sees the progress"). Never its token.
 */

export const setupLinkSchema = z.object({
  id: z.string(),
  intents: z.array(z.string()),
  status: z.enum(["open", "expired", "revoked"]),
  createdBy: z.string().nullable().describe("The owner who made it; null: the operator"),
  createdAt: z.string(),
  expiresAt: z.string(),
  revokedAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(),
  progress: z.object({
    domainsClaimed: z.array(z.string()),
    domainsVerified: z.array(z.string()).describe("Verified through the link: its connections serve these"),
    connections: z.array(connectionSchema).describe("Made through the link; off until an owner enables them"),
    scimTokens: z.array(
      z.object({ id: z.string(), createdAt: z.string(), lastUsedAt: z.string().nullable() }),
    ),
  }),
});
export type WireSetupLink = z.infer<typeof setupLinkSchema>;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export async function toWireLink(deps: Deps, row: SetupLinkRow): Promise<WireSetupLink> {
  const [connections, tokens] = await Promise.all([
    connectionsOfLink(deps, row.orgId, row.id),
    tokensOfLink(deps, row),
  ]);
  return {
    id: row.id,
    intents: row.intents,
    status: row.revokedAt !== null ? "revoked" : row.expiresAt <= deps.now() ? "expired" : "open",
    createdBy: row.createdBy,
    createdAt: new Date(row.createdAt).toISOString(),
    expiresAt: new Date(row.expiresAt).toISOString(),
    revokedAt: iso(row.revokedAt),
    lastUsedAt: iso(row.lastUsedAt),
    progress: {
      domainsClaimed: row.claimed,
      domainsVerified: row.domains,
      connections: connections.map((connection) => toWireConnection(deps, connection)),
      scimTokens: tokens.map(({ id, createdAt, lastUsedAt }) => ({ id, createdAt, lastUsedAt })),
    },
  };
}
