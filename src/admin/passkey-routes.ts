import { Hono } from "hono";
import { z } from "zod";
import { auditAdminAction } from "../audit/admin-action";
import type { AppEnv } from "../http/app-env";
import { NO_CONTENT, operation } from "../http/documented";
import { adminSecurityKeySchema, listUserSecurityKeys, removeUserSecurityKey } from "./passkeys";

/**
 * A user's passkeys and security keys in the admin API (issue 47, docs/passkeys.md "For the operator"): the list with
 * what the operator needs to judge a key (made by an upgrade? phishing-resistant yet? last used?), and removing one,
 * audited (`admin.security-key.remove`). Paths as the user's own (`/user/security-keys/{id}`), under the user.
 */
export const passkeyAdminRoutes = new Hono<AppEnv>()
  .get(
    "/users/:id/security-keys",
    operation({
      summary: "A user's passkeys and security keys",
      description:
        "Oldest first: each key's nickname, transports, when it was added and last used (to the hour), whether a " +
        "passkey upgrade made it (`upgrade`, no gesture) and whether its sign-ins count as phishing-resistant " +
        "(`phishingResistant`: an upgrade's only after a use with user verification), and its backup state " +
        "(WebAuthn's BE and BS flags: `backupEligible`, a passkey its password manager may sync; `backupState`, " +
        "synced now, as its latest sign-in said; both null when unknown: a key from before, not used since). " +
        "Never the public key. " +
        "404 `not-found` for an unknown user.",
      security: "admin-secret",
      answers: {
        200: {
          description: "The keys.",
          schema: z.object({ securityKeys: z.array(adminSecurityKeySchema) }),
        },
      },
    }),
    async (c) => c.json({ securityKeys: await listUserSecurityKeys(c.var.deps, c.req.param("id")) }),
  )
  .delete(
    "/users/:id/security-keys/:keyId",
    operation({
      summary: "Remove a user's passkey or security key",
      description:
        "Takes the key off the account (a lost one, one the user does not recognize, an upgrade's they did not " +
        "want). When it was the last key, a passkey second step falls back to the user's other factor. 404 " +
        "`not-found` for an unknown user or a key id that is not this user's. Audited (`admin.security-key.remove`).",
      security: "admin-secret",
      answers: { 204: NO_CONTENT("Removed.") },
    }),
    async (c) => {
      const userId = c.req.param("id");
      const keyId = c.req.param("keyId");
      await removeUserSecurityKey(c.var.deps, userId, keyId);
      auditAdminAction(c, "security-key.remove", userId, { keyId });
      return c.body(null, 204);
    },
  );
