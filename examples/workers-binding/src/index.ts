/**
 * An app's own Worker guarded by @edge-auth/hono through a service binding to the auth service (README.md beside
 * this file). Every check is a call on the same machine: no JWKS fetch, no token verification here, and a session
 * signed out a second ago is already refused (`live`).
 *
 * - `GET /api/me`: who is calling, from the service (`requireUser({ live: true })`).
 * - `GET /api/documents/:id`: allowed by the policy `documents-read` (a role) — policies.cedar.
 * - `PUT /api/documents/:id`: allowed by `documents-edit`, for the editors of that document (a relationship).
 */
import { type AuthEnv, type AuthServiceBinding, auth, requirePermission, requireUser } from "@edge-auth/hono";
import { Hono } from "hono";

interface Env {
  /** The service's `AuthService` entrypoint (wrangler.toml `[[services]]`). */
  AUTH: AuthServiceBinding;
}

const document = (id: string) => ({ type: "Document", id });

const app = new Hono<{ Bindings: Env } & AuthEnv>();

app.use("/api/*", auth({ binding: "AUTH" }), requireUser({ live: true }));

app.get("/api/me", (c) => {
  const { user, session, face } = c.var.identity;
  return c.json({ user, session, face });
});

app.get(
  "/api/documents/:id",
  requirePermission("read", (c) => document(c.req.param("id")!)),
  (c) => c.json({ id: c.req.param("id"), readBy: c.var.identity.user.id }),
);

app.put(
  "/api/documents/:id",
  requirePermission("edit", (c) => document(c.req.param("id")!)),
  async (c) => c.json({ id: c.req.param("id"), editedBy: c.var.identity.user.id, text: await c.req.text() }),
);

export default app;
