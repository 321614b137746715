import { Hono } from "hono";
import { auditAdminAction } from "../../audit/admin-action";
import type { AppEnv } from "../../http/app-env";
import { removeUserSecurityKey } from "../passkeys";
import { action, back, userPath } from "./handlers";

/**
 * The console's removal of a user's passkey (the user page's passkeys section, pages-passkeys.ts): a form post with
 * the session's CSRF token, through the admin API's own service and audit event (`admin.security-key.remove`). A key
 * id that is not this user's is the admin API's 404, shown as the console's error page: nothing removed.
 */
export const consolePasskeyRoutes = new Hono<AppEnv>().post(
  "/users/:id/security-keys/:keyId/remove",
  action(async (c) => {
    const userId = c.req.param("id")!;
    const keyId = c.req.param("keyId")!;
    await removeUserSecurityKey(c.var.deps, userId, keyId);
    auditAdminAction(c, "security-key.remove", userId, { keyId });
    return back(c, userPath(userId), "security-key-removed");
  }),
);
