// TOTP MFA driven by the real @nhost/nhost-js client against `wrangler dev`: set-up from the generated secret, then a
// sign-in that stops at the mfa ticket and completes with a code computed from that secret.
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../src/auth/mfa/totp";
import { client, followLink, mailedLink, REDIRECT, rejection, uniqueEmail } from "./client";

const PASSWORD = "a long enough password";

describe("@nhost/nhost-js with TOTP MFA", () => {
  it("activates TOTP, then sign-in answers an mfa ticket that a code turns into a session", async () => {
    const nhost = client();
    const email = uniqueEmail("mfa");
    await nhost.auth.signUpEmailPassword({ email, password: PASSWORD, options: { redirectTo: REDIRECT } });
    const verified = await followLink(await mailedLink(email));
    await nhost.auth.refreshToken({ refreshToken: verified.searchParams.get("refreshToken")! });

    const generated = await nhost.auth.changeUserMfa();
    expect(generated.body.imageUrl).toMatch(/^data:image\/png;base64,/);
    const secret = decodeBase32IgnorePadding(generated.body.totpSecret);
    const step = totpStep(Date.now());
    const activated = await nhost.auth.verifyChangeUserMfa({
      code: totpCode(secret, step),
      activeMfaType: "totp",
    });
    expect(activated.body).toBe("OK");

    const fresh = client();
    const first = await fresh.auth.signInEmailPassword({ email, password: PASSWORD });
    expect(first.body.session).toBeFalsy();
    expect(first.body.mfa?.ticket).toMatch(/^mfaTotp:/);
    expect(fresh.getUserSession()).toBeNull();

    const wrong = await rejection(
      fresh.auth.verifySignInMfaTotp({ ticket: first.body.mfa!.ticket, otp: "000000" }),
    );
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe("invalid-totp");

    // The activation used this step's code; a code is accepted once, so the app shows the next one.
    const second = await fresh.auth.verifySignInMfaTotp({
      ticket: first.body.mfa!.ticket,
      otp: totpCode(secret, step + 1n),
    });
    expect(second.body.session?.user?.email).toBe(email);
    expect(fresh.getUserSession()?.user?.activeMfaType).toBe("totp");
    expect((await fresh.auth.getUser()).body.activeMfaType).toBe("totp");
  });
});
