// The sign-in pipeline (src/auth/sign-in/pipeline.ts) at the service level: the method a session and its audit
// record is the one its flow names, with no request and no path anywhere (threat: a method guessed from the URL, so
// that a flow reached at another path records, or is refused under enforced SSO, as another method); the checks
// before the first factor are asked once per address per sign-in (the enforced-SSO query ran twice before).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AuditEvent } from "../../../src/audit/events";
import { beginSignIn, registerSignInHooks, startSession } from "../../../src/auth";
import { findUserById } from "../../../src/auth/users";
import { NO_VERIFICATION, service, signUp, testDeps, testScope, uniqueEmail } from "../../helpers";
import { userD1 } from "../../support/shards";

const bindings = { ...env, ...NO_VERIFICATION };

function depsRecording(events: AuditEvent[]) {
  const deps = testDeps(bindings, { now: Date.now() });
  return {
    ...deps,
    audit: Object.assign((event: AuditEvent) => void events.push(event), {
      signInFailure() {},
      actAs() {},
      actor: () => ({ kind: "user" as const }),
    }),
  };
}

const methodOfSession = async (userId: string, sessionId: string) =>
  (
    await userD1(userId)
      .prepare("SELECT method FROM sessions WHERE id = ?")
      .bind(sessionId)
      .first<{ method: string | null }>()
  )?.method;

describe("the sign-in pipeline", () => {
  it("records the method its flow names, with no request path to read one from", async () => {
    const signedUp = await signUp(service(bindings));
    const events: AuditEvent[] = [];
    const deps = depsRecording(events);
    const user = (await findUserById(deps.shards, signedUp.user.id))!;
    for (const method of ["email-otp", "sso:saml", "provider:github", "hosted-page"] as const) {
      const { session } = await startSession(testScope(deps, method), { user });
      expect(await methodOfSession(user.id, session.refreshTokenId)).toBe(method);
      expect(events.at(-1)).toEqual({
        type: "signin.success",
        userId: user.id,
        detail: { method, sessionId: session.refreshTokenId },
      });
    }
  });

  it("asks the checks before the first factor once per address: again at the session only for another address", async () => {
    const email = uniqueEmail("checked-once");
    const asked: string[] = [];
    registerSignInHooks({
      beforeFirstFactor: async (_deps, attempt) => {
        if (attempt.email?.toLowerCase() === email || attempt.email === "other@example.com")
          asked.push(`${attempt.method}:${attempt.email}`);
      },
    });
    const signedUp = await signUp(service(bindings), email);
    const deps = depsRecording([]);
    const user = (await findUserById(deps.shards, signedUp.user.id))!;
    asked.length = 0; // the sign-up's own session asked once

    const scope = testScope(deps, "email-password");
    await beginSignIn(scope, { email: email.toUpperCase() });
    await startSession(scope, { user });
    expect(asked).toEqual([`email-password:${email.toUpperCase()}`]);

    // A first factor that named another address (a provider's account linked to this user): the session asks again.
    asked.length = 0;
    const other = testScope(deps, "provider:github");
    await beginSignIn(other, { email: "other@example.com" });
    await startSession(other, { user });
    expect(asked).toEqual(["provider:github:other@example.com", `provider:github:${email}`]);
  });
});
