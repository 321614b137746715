// Probe (takeover): a provider identity linked while the address was unproven survives the owner's first proof.
import { describe, expect, it } from "vitest";
import { expectError, mailbox, PASSWORD, sessionFromRefresh, uniqueEmail, verifyPath } from "./helpers";
import { signInWith, withProviders } from "./providers/support";

const svc = withProviders({ AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "true", AUTH_EMAIL_PASSWORDLESS_ENABLED: "true" });
const uniqueId = () => String(Math.floor(Math.random() * 1e12));

describe("pre-hijack through an unverified provider identity", () => {
  it("the attacker's GitHub identity stays linked after the victim proves the address with Google", async () => {
    const email = uniqueEmail("victim");
    const attackerGithub = uniqueId();
    // 1. The attacker signs in at a provider that does not verify the address they typed: the victim's.
    const first = await signInWith(svc, "github", {}, { fake_id: attackerGithub, fake_email: email, fake_verified: "false" });
    const attacker = await sessionFromRefresh(svc, first.back.searchParams.get("refreshToken")!);
    expect(attacker.user).toMatchObject({ email, emailVerified: false });
    // 2. The victim signs in with Google (verified): the account is proven, what was set up before is wiped.
    const second = await signInWith(svc, "google", {}, { fake_id: `g-${uniqueId()}`, fake_email: email });
    const victim = await sessionFromRefresh(svc, second.back.searchParams.get("refreshToken")!);
    expect(victim.user.id).toBe(attacker.user.id);
    expect(victim.user.emailVerified).toBe(true);
    await expectError(await svc.post("/token", { refreshToken: attacker.refreshToken }), 401, "invalid-refresh-token");
    // 3. The attacker signs in with their GitHub identity again.
    const again = await signInWith(svc, "github", {}, { fake_id: attackerGithub });
    console.log("attacker back at:", again.back.toString());
    const back = await sessionFromRefresh(svc, again.back.searchParams.get("refreshToken")!);
    console.log("TAKEOVER: attacker's GitHub sign-in lands in the victim's account:", back.user.id === victim.user.id, back.user.email);
    expect(back.user.id).not.toBe(victim.user.id);
  });

  it("the same after a magic link", async () => {
    const email = uniqueEmail("victim");
    const attackerGithub = uniqueId();
    const first = await signInWith(svc, "github", {}, { fake_id: attackerGithub, fake_email: email, fake_verified: "false" });
    const attacker = await sessionFromRefresh(svc, first.back.searchParams.get("refreshToken")!);
    expect((await svc.post("/signin/passwordless/email", { email })).status).toBe(200);
    const [mail] = await mailbox(svc, email);
    const followed = await svc.get(verifyPath(mail!));
    const victimRefresh = new URL(followed.headers.get("location")!).searchParams.get("refreshToken")!;
    const victim = await sessionFromRefresh(svc, victimRefresh);
    expect(victim.user.id).toBe(attacker.user.id);
    expect(victim.user.emailVerified).toBe(true);
    const again = await signInWith(svc, "github", {}, { fake_id: attackerGithub });
    const back = await sessionFromRefresh(svc, again.back.searchParams.get("refreshToken")!);
    console.log("TAKEOVER (magic link): attacker lands in victim account:", back.user.id === victim.user.id);
    expect(back.user.id).not.toBe(victim.user.id);
  });
});
