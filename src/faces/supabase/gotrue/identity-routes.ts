import { Hono } from "hono";
import type { AppEnv } from "../../../http/app-env";
import { unlinkIdentity } from "../../../providers";
import { GoTrueError } from "./errors";
import { signedIn } from "./request";

/**
 * `unlinkIdentity`: `DELETE /user/identities/{identity_id}` (GoTrue's internal/api/identity.go), through the core's
 * unlink, which keeps the last way in within its one DELETE (src/providers/accounts.ts). GoTrue's answers: a malformed
 * id 404, the last way in 422 `single_identity_not_deletable`, someone else's or an unknown one 422
 * `identity_not_found`. The `email` identity (identities.ts) is the account's address: it is changed, not unlinked.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const goTrueIdentityRoutes = new Hono<AppEnv>().delete("/user/identities/:id", async (c) => {
  const { user } = await signedIn(c);
  const id = c.req.param("id");
  if (!UUID.test(id)) throw new GoTrueError(404, "validation_failed", "identity_id must be an UUID");
  if (id === user.id) {
    throw new GoTrueError(
      422,
      "single_identity_not_deletable",
      "The email identity is the account's address: change the email instead",
    );
  }
  const outcome = await unlinkIdentity(c.var.deps, user.id, id);
  if (outcome === "last-way") {
    throw new GoTrueError(
      422,
      "single_identity_not_deletable",
      "User must have at least 1 identity after unlinking",
    );
  }
  if (outcome === "not-found") throw new GoTrueError(422, "identity_not_found", "Identity doesn't exist");
  return c.json({});
});
