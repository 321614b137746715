// AuthAdmin through a real service binding (contract platform.md §1, docs/workers.md): the consumer Worker
// (test/fakes/binding-consumer.js) binds it with `props: { caller: "billing-worker" }` (vitest.config.ts).
import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { getConfig } from "../../src/runtime/config";
import { NO_VERIFICATION, PASSWORD, service, uniqueEmail, type WireSession } from "../helpers";
import { authenticateThrough, rpc } from "./support";

const svc = service(NO_VERIFICATION);
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/**
 * `AUTH_ADMIN_BINDING_ENABLED=true` for `work`: the binding's calls run with the Worker's own parsed configuration
 * (src/runtime/config.ts), which the suite's env leaves off; switched on in place for this file's calls, and put
 * back whatever happens.
 */
async function withAdminBinding(work: () => Promise<void>): Promise<void> {
  const platform = getConfig(env).platform;
  platform.adminBindingEnabled = true;
  try {
    await work();
  } finally {
    platform.adminBindingEnabled = false;
  }
}

// Threat: an operator's powers open to every Worker of the account. The entrypoint is closed unless turned on.
it("off by default: every method answers disabled-endpoint as a value, and does nothing", async () => {
  const email = uniqueEmail("admin-off");
  const answers = await Promise.all([
    rpc("ADMIN", "createUser", { email }),
    rpc("ADMIN", "updateUser", crypto.randomUUID(), { displayName: "x" }),
    rpc("ADMIN", "disableUser", crypto.randomUUID()),
    rpc("ADMIN", "deleteUser", crypto.randomUUID()),
    rpc("ADMIN", "revokeSessions", crypto.randomUUID()),
    rpc("ADMIN", "listAudit", {}),
  ]);
  for (const answer of answers) {
    expect(answer).toEqual({ ok: false, error: { code: "disabled-endpoint", message: expect.any(String) } });
  }
  const signIn = await svc.post("/signin/email-password", { email, password: PASSWORD });
  expect(signIn.status).toBe(401);
});

describe("switched on", () => {
  it("creates, updates, signs out, disables and deletes a user, each audited with the caller's name", async () => {
    await withAdminBinding(async () => {
      const email = uniqueEmail("admin-binding");
      const user = await rpc("ADMIN", "createUser", { email, password: PASSWORD, emailVerified: true });
      expect(user).toMatchObject({ email, emailVerified: true, disabled: false });
      const updated = await rpc("ADMIN", "updateUser", user.id, { displayName: "Billing's pick" });
      expect(updated).toMatchObject({ id: user.id, displayName: "Billing's pick" });

      const signIn = await svc.post("/signin/email-password", { email, password: PASSWORD });
      const { session } = (await signIn.json()) as { session: WireSession };
      const live = { options: { live: true } };
      expect((await authenticateThrough(bearer(session.accessToken), live))?.user.id).toBe(user.id);
      expect(await rpc("ADMIN", "revokeSessions", user.id)).toEqual({ revoked: user.id });
      // The sign-out everywhere is seen by the very next `live` check.
      expect(await authenticateThrough(bearer(session.accessToken), live)).toBeNull();

      expect(await rpc("ADMIN", "disableUser", user.id)).toMatchObject({ id: user.id, disabled: true });
      expect((await svc.post("/signin/email-password", { email, password: PASSWORD })).status).toBe(401);

      await vi.waitFor(async () => {
        const page = await rpc("ADMIN", "listAudit", { userId: user.id, limit: 50 });
        const types = page.items.map((event: { type: string }) => event.type);
        expect(types).toEqual(
          expect.arrayContaining([
            "admin.user.create",
            "admin.user.update",
            "admin.sessions.revoke-all",
            "admin.user.disable",
          ]),
        );
        for (const event of page.items.filter((item: { type: string }) => item.type.startsWith("admin."))) {
          expect(event.detail).toMatchObject({ caller: "billing-worker", via: "service-binding" });
          // The actor is the Worker (operators.md §4), by the name its binding declares.
          expect(event.actor).toEqual({ type: "worker", name: "billing-worker" });
        }
      });

      expect(await rpc("ADMIN", "deleteUser", user.id)).toEqual({ deleted: user.id });
      expect(await rpc("AUTH", "getUser", user.id)).toBeNull();
      await vi.waitFor(async () => {
        const page = await rpc("ADMIN", "listAudit", { type: "admin.user.delete", limit: 100 });
        const deletion = page.items.find((event: { userId?: string }) => event.userId === user.id);
        expect(deletion?.detail).toMatchObject({ caller: "billing-worker", email });
      });
    });
  });

  // Threat: a bad argument from another Worker becoming a 500-like throw, or a write of garbage.
  it("a bad argument or an unknown user is the catalogue's error, as a value", async () => {
    await withAdminBinding(async () => {
      const answers = await Promise.all([
        rpc("ADMIN", "createUser", { email: "not an address" }),
        rpc("ADMIN", "updateUser", crypto.randomUUID(), { displayName: "Nobody" }),
        rpc("ADMIN", "updateUser", crypto.randomUUID(), { password: "not a field here" }),
        rpc("ADMIN", "deleteUser", 42),
        rpc("ADMIN", "listAudit", { limit: 10_000 }),
        // Threat: admin actions in the log that name nobody. A binding without `props.caller` is refused.
        rpc("ADMIN_UNNAMED", "listAudit", {}),
      ]);
      expect(answers.map((answer) => answer.error?.code)).toEqual([
        "invalid-request",
        "not-found",
        "invalid-request",
        "invalid-request",
        "invalid-request",
        "invalid-request",
      ]);
      for (const answer of answers)
        expect(answer).toMatchObject({ ok: false, error: { message: expect.any(String) } });
    });
  });
});
