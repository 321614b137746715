// The TOTP flow at the service level with a fixed, movable clock (services take their clock in `deps.now`), so the
// window and the replay rule are checked exactly, step by step, with no dependence on when the test runs.

import { env } from "cloudflare:test";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { describe, expect, it } from "vitest";
import { issueMfaTicket } from "../../../src/auth/complete-sign-in";
import { totpCode, totpStep } from "../../../src/auth/mfa/totp";
import { changeMfa, generateTotp } from "../../../src/auth/mfa/totp-setup";
import { verifySignInMfaTotp } from "../../../src/auth/mfa/totp-sign-in";
import { NO_VERIFICATION, service, signUp, testDeps, testScope } from "../../helpers";

const bindings = { ...env, ...NO_VERIFICATION, AUTH_MFA_ENABLED: "true" };

const depsAt = (clock: { now: number }) => testDeps(bindings, clock);

// A fixed instant at the start of a 30-second step (2,000,000,010,000 ms is a multiple of 30,000).
const T0 = 2_000_000_010_000 - (2_000_000_010_000 % 30_000);

describe("TOTP with a fixed clock", () => {
  it("accepts exactly the previous, current and next step, each code once, and moves with time", async () => {
    const clock = { now: T0 };
    const deps = depsAt(clock);
    const session = await signUp(service(bindings));
    const secret = decodeBase32IgnorePadding((await generateTotp(deps, session.user.id)).totpSecret);
    const at = (offset: bigint) => totpCode(secret, totpStep(clock.now) + offset);

    // Two steps away either side is outside the window.
    await expect(changeMfa(deps, session.user.id, { code: at(-2n), activeMfaType: "totp" })).rejects.toThrow(
      "invalid TOTP code",
    );
    await expect(changeMfa(deps, session.user.id, { code: at(2n), activeMfaType: "totp" })).rejects.toThrow(
      "invalid TOTP code",
    );
    // The previous step is still accepted (clock drift), and activates.
    const previous = at(-1n);
    await changeMfa(deps, session.user.id, { code: previous, activeMfaType: "totp" });

    const signIn = (code: string) =>
      issueMfaTicket(deps, session.user.id).then((ticket) =>
        verifySignInMfaTotp(testScope(deps, "mfa-totp"), { ticket, otp: code }),
      );
    // The same code, and any older step, is a replay.
    await expect(signIn(previous)).rejects.toThrow("invalid TOTP code");
    // The current and the next step are newer: accepted once each, in order.
    const current = at(0n);
    const next = at(1n);
    expect((await signIn(current)).session.user.id).toBe(session.user.id);
    await expect(signIn(current)).rejects.toThrow("invalid TOTP code");
    expect((await signIn(next)).session.user.id).toBe(session.user.id);

    // 30 seconds later the window has moved: the step after `next` is the new next one.
    clock.now += 30_000;
    await expect(signIn(at(-1n))).rejects.toThrow("invalid TOTP code"); // = `next`, already used
    expect((await signIn(at(1n))).session.user.id).toBe(session.user.id);
    // Two minutes later, a code from the old window is refused even though never used.
    clock.now += 120_000;
    await expect(signIn(totpCode(secret, totpStep(T0) + 1n))).rejects.toThrow("invalid TOTP code");
  });

  it("an MFA ticket expires after exactly five minutes", async () => {
    const clock = { now: T0 };
    const deps = depsAt(clock);
    const session = await signUp(service(bindings));
    const secret = decodeBase32IgnorePadding((await generateTotp(deps, session.user.id)).totpSecret);
    await changeMfa(deps, session.user.id, {
      code: totpCode(secret, totpStep(clock.now)),
      activeMfaType: "totp",
    });
    const ticket = await issueMfaTicket(deps, session.user.id);
    clock.now += 5 * 60_000;
    await expect(
      verifySignInMfaTotp(testScope(deps, "mfa-totp"), {
        ticket,
        otp: totpCode(secret, totpStep(clock.now)),
      }),
    ).rejects.toThrow("invalid or expired ticket");
    const fresh = await issueMfaTicket(deps, session.user.id);
    clock.now += 5 * 60_000 - 1;
    expect(
      (
        await verifySignInMfaTotp(testScope(deps, "mfa-totp"), {
          ticket: fresh,
          otp: totpCode(secret, totpStep(clock.now)),
        })
      ).session.user.id,
    ).toBe(session.user.id);
  });
});
