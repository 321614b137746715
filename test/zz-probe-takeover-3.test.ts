// Probe (takeover): the pre-hijack wipe (proveEmail) empties the password of an imported user, which re-opens the
// lazy password migration: the old system's password (the attacker's) signs in again after the owner's proof.
import { describe, expect, it } from "vitest";
import { mailbox, NO_VERIFICATION, service, uniqueAddress, verifyPath } from "./helpers";
import { importUsers, nhostUser } from "./move-in/support";
import { answers, hookReceiver } from "./hooks/support";

const ATTACKER_PASSWORD = "attacker old-system password";
const receiver = hookReceiver({
  PASSWORD_MIGRATION: (payload) =>
    payload.password === ATTACKER_PASSWORD ? Response.json({ verified: true, user: {} }) : answers.json({ verified: false })(payload, undefined as never),
});
const svc = service({ ...NO_VERIFICATION, ...receiver.bindings, AUTH_EMAIL_PASSWORDLESS_ENABLED: "true" });
const signIn = (email: string, password: string) =>
  svc.request("POST", "/signin/email-password", { json: { email, password }, headers: { "cf-connecting-ip": uniqueAddress() } });

describe("pre-hijack carried by an import, with the password migration hook", () => {
  it("the old system's password signs in again after the owner proved the address", async () => {
    // An account the attacker made in the old system on the victim's address, never verified, moved in without a hash.
    const { bundle, id, email: raw } = await nhostUser({ emailVerified: false, providers: [] });
    const email = raw.toLowerCase();
    await importUsers(svc, [bundle]);
    const attackerFirst = await signIn(email, ATTACKER_PASSWORD);
    console.log("attacker first sign-in:", attackerFirst.status);
    // The owner signs in by magic link: the first proof of the address wipes the password and every session.
    expect((await svc.post("/signin/passwordless/email", { email })).status).toBe(200);
    const [mail] = await mailbox(svc, email);
    const followed = await svc.get(verifyPath(mail!));
    const refresh = new URL(followed.headers.get("location")!).searchParams.get("refreshToken");
    console.log("owner's magic link signed in:", Boolean(refresh));
    const owner = (await (await svc.post("/token", { refreshToken: refresh })).json()) as { user: { id: string; emailVerified: boolean } };
    expect(owner.user).toMatchObject({ id, emailVerified: true });
    // The attacker tries the old password again.
    const again = await signIn(email, ATTACKER_PASSWORD);
    const body = (await again.json()) as { session?: { user: { id: string } } };
    console.log("attacker after the owner's proof:", again.status, body.session?.user.id === id ? "IN THE OWNER'S ACCOUNT" : JSON.stringify(body));
    expect(again.status).toBe(401);
  });
});
