import { eq } from "drizzle-orm";
import { oauth2Clients } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { describeIssues } from "../../http/validation";
import { authorizationDetailsTypesSchema } from "../authorization-details";
import { getClient, type WireClient } from "./admin-clients";
import { forgetOAuth2Client } from "./client-cache";

/**
 * The console's screen for a client's RFC 9396 types (src/admin/console/): that one setting replaced, checked by the
 * same schema as the admin API's body (`authorizationDetailsTypes`), every other setting left as it is.
 */
export async function setAuthorizationDetailsTypes(
  deps: Deps,
  clientId: string,
  types: unknown,
): Promise<WireClient> {
  const parsed = authorizationDetailsTypesSchema.safeParse(types);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({
      ...issue,
      path: ["authorizationDetailsTypes", ...issue.path],
    }));
    throw new AppError("invalid-request", describeIssues(issues));
  }
  const row = await deps.db
    .update(oauth2Clients)
    .set({ authorizationDetailsTypes: parsed.data, updatedAt: deps.now() })
    .where(eq(oauth2Clients.clientId, clientId))
    .returning({ clientId: oauth2Clients.clientId })
    .get();
  if (!row) throw new AppError("not-found", "no OAuth2 client with this id");
  forgetOAuth2Client(clientId);
  return getClient(deps, clientId);
}
