// Invitations (contract organizations.md §1): mailed, single use, seven days, bound to the invited and verified
// address; re-inviting replaces; withdrawing kills the ticket. The threat named above a test is what it keeps out.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  expectContractError,
  expectError,
  mailbox,
  NO_VERIFICATION,
  service,
  signUp,
  uniqueAddress,
  uniqueEmail,
} from "../helpers";
import { addMember, admin, as, createOrg, invitationTicket, svc, user } from "./support";

async function invite(token: string, orgId: string, email: string, role = "member", extra = {}) {
  return as(token, "POST", `/orgs/${orgId}/invitations`, { email, role, ...extra });
}

describe("invitations: the invitee's inbox", () => {
  // Threat: any signed-in user can make an org and invite, so a stranger's address invited from many accounts and
  // client addresses is a mail bomb unless the invited address itself is counted (contract §11: EMAIL per recipient).
  it("counts each invitation on the invited address: three orgs cannot mail one inbox a third time", async () => {
    const limited = service({
      ...NO_VERIFICATION,
      AUTH_RATE_LIMIT_ENABLE: "true",
      AUTH_RATE_LIMIT_EMAIL_BURST: "2",
    });
    const victim = uniqueEmail("invite-bomb");
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const owner = await user();
      const org = await createOrg(owner);
      const answer = await limited.request("POST", `/orgs/${org.id}/invitations`, {
        headers: {
          authorization: `Bearer ${owner.accessToken}`,
          "content-type": "application/json",
          "cf-connecting-ip": uniqueAddress(),
        },
        body: JSON.stringify({ email: victim.toUpperCase(), role: "member" }),
      });
      statuses.push(answer.status);
    }
    expect(statuses).toEqual([201, 201, 429]);
    expect(await mailbox(svc, victim)).toHaveLength(2);
  });
});

describe("invitations: the happy path", () => {
  it("mails a link with a ticket that the invited, verified user accepts once", async () => {
    const owner = await user();
    const org = await createOrg(owner);
    const invitee = await user("invitee", true);
    const created = await invite(owner.accessToken, org.id, invitee.user.email.toUpperCase(), "admin");
    expect(created.status).toBe(201);
    const invitation = (await created.json()) as { id: string; email: string; expiresAt: string };
    expect(invitation.email).toBe(invitee.user.email);
    expect(Date.parse(invitation.expiresAt) - Date.now()).toBeGreaterThan(6.9 * 24 * 3600 * 1000);
    const [mail] = await mailbox(svc, invitee.user.email);
    expect(mail!.subject).toContain(org.name);
    // The authorization server is off here, so no hosted page: the link leads to the app (docs/organizations.md,
    // "The link"); the hosted page's link is test/orgs/invitation-page.test.ts's.
    expect(mail!.text).toMatch(
      /^http:\/\/localhost:3000\/?\?ticket=orgInvitation%3A[\w-]+&type=orgInvitation$/m,
    );
    const pending = (await (await as(owner.accessToken, "GET", `/orgs/${org.id}/invitations`)).json()) as {
      items: { id: string }[];
    };
    expect(pending.items.map((i) => i.id)).toEqual([invitation.id]);

    const ticket = await invitationTicket(invitee.user.email);
    const accepted = await as(invitee.accessToken, "POST", "/orgs/invitations/accept", { ticket });
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toMatchObject({ id: org.id, role: "admin" });
    expect((await as(invitee.accessToken, "GET", `/orgs/${org.id}`)).status).toBe(200);
    // Single use (threat: a mail read twice, or by someone else later, joining again after removal).
    await expectError(
      await as(invitee.accessToken, "POST", "/orgs/invitations/accept", { ticket }),
      401,
      "invalid-ticket",
    );
    expect(
      ((await (await as(owner.accessToken, "GET", `/orgs/${org.id}/invitations`)).json()) as { items: [] })
        .items,
    ).toEqual([]);
  });

  it("writes the mail in the invitee's language when they have an account", async () => {
    const french = service({ ...NO_VERIFICATION, AUTH_LOCALE_ALLOWED_LOCALES: "en,fr" });
    const owner = await user();
    const org = await createOrg(owner);
    const email = uniqueEmail("fr");
    await signUp(french, email, { locale: "fr" });
    const created = await french.request("POST", `/orgs/${org.id}/invitations`, {
      token: owner.accessToken,
      json: { email },
    });
    expect(created.status).toBe(201);
    const [mail] = await mailbox(svc, email);
    expect(mail!.subject).toBe(`Vous êtes invité à rejoindre ${org.name}`);
  });

  // Threat: a mailed link that sends the invitee to an attacker's site with the ticket in its URL.
  it("sends the link only to an allowed redirectTo", async () => {
    const owner = await user();
    const org = await createOrg(owner);
    await expectError(
      await invite(owner.accessToken, org.id, uniqueEmail(), "member", {
        redirectTo: "https://evil.example/",
      }),
      400,
      "redirectTo-not-allowed",
    );
    const email = uniqueEmail();
    const ok = await invite(owner.accessToken, org.id, email, "member", {
      redirectTo: "http://localhost:3000/join",
    });
    expect(ok.status).toBe(201);
    expect((await mailbox(svc, email))[0]!.text).toContain("http://localhost:3000/join?ticket=");
  });
});

describe("invitations: bound to the invited, verified address", () => {
  // Threat: a forwarded or intercepted mail (or a leaked ticket) letting another account into the org.
  it("refuses another address and keeps the ticket for its addressee", async () => {
    const owner = await user();
    const org = await createOrg(owner);
    const invitee = await user("invitee", true);
    const stranger = await user("stranger", true);
    await invite(owner.accessToken, org.id, invitee.user.email);
    const ticket = await invitationTicket(invitee.user.email);
    await expectError(
      await as(stranger.accessToken, "POST", "/orgs/invitations/accept", { ticket }),
      403,
      "invitation-email-mismatch",
    );
    await expectError(await as(stranger.accessToken, "GET", `/orgs/${org.id}`), 404, "not-found");
    expect((await as(invitee.accessToken, "POST", "/orgs/invitations/accept", { ticket })).status).toBe(200);
  });

  // Threat: account pre-hijacking: someone signs up with the victim's address (unverified) and accepts her invite.
  it("refuses the invited address while it is unverified, and keeps the ticket", async () => {
    const owner = await user();
    const org = await createOrg(owner);
    const invitee = await user("unverified", false);
    await invite(owner.accessToken, org.id, invitee.user.email);
    const ticket = await invitationTicket(invitee.user.email);
    const refused = await expectError(
      await as(invitee.accessToken, "POST", "/orgs/invitations/accept", { ticket }),
      403,
      "invitation-email-mismatch",
    );
    expect(refused.message).toMatch(/verify/);
    await admin("PATCH", `/users/${invitee.user.id}`, { emailVerified: true });
    expect((await as(invitee.accessToken, "POST", "/orgs/invitations/accept", { ticket })).status).toBe(200);
  });

  // Threat: two accepts racing (a double click, or two devices) both joining on one ticket: one consume wins.
  it("consumes a ticket once under concurrent accepts", async () => {
    const owner = await user();
    const org = await createOrg(owner);
    const invitee = await user("race", true);
    await invite(owner.accessToken, org.id, invitee.user.email);
    const ticket = await invitationTicket(invitee.user.email);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        as(invitee.accessToken, "POST", "/orgs/invitations/accept", { ticket }),
      ),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([200, 401, 401, 401, 401]);
  });

  it("refuses an expired ticket, an unknown one, and hostile input", async () => {
    const owner = await user();
    const org = await createOrg(owner);
    const invitee = await user("late", true);
    const created = (await (await invite(owner.accessToken, org.id, invitee.user.email)).json()) as {
      id: string;
    };
    const ticket = await invitationTicket(invitee.user.email);
    await env.DB.prepare("UPDATE org_invitations SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1, created.id)
      .run();
    await expectError(
      await as(invitee.accessToken, "POST", "/orgs/invitations/accept", { ticket }),
      401,
      "invalid-ticket",
    );
    await expectError(
      await as(invitee.accessToken, "POST", "/orgs/invitations/accept", { ticket: "orgInvitation:nope" }),
      401,
      "invalid-ticket",
    );
    for (const body of [{}, { ticket: "" }, { ticket: 1 }, { ticket: "x".repeat(201) }]) {
      await expectContractError(
        await as(invitee.accessToken, "POST", "/orgs/invitations/accept", body),
        JSON.stringify(body),
      );
    }
    await expectError(await svc.post("/orgs/invitations/accept", { ticket }), 401, "unauthorized");
  });
});

describe("invitations: managing them", () => {
  it("replaces an earlier invitation of the same address, and a withdrawn one stops working", async () => {
    const owner = await user();
    const org = await createOrg(owner);
    const invitee = await user("again", true);
    await invite(owner.accessToken, org.id, invitee.user.email, "member");
    const first = await invitationTicket(invitee.user.email);
    const second = (await (await invite(owner.accessToken, org.id, invitee.user.email, "admin")).json()) as {
      id: string;
    };
    const latest = await invitationTicket(invitee.user.email);
    expect(latest).not.toBe(first);
    const pending = (await (await as(owner.accessToken, "GET", `/orgs/${org.id}/invitations`)).json()) as {
      items: { id: string; role: string }[];
    };
    expect(pending.items).toEqual([expect.objectContaining({ id: second.id, role: "admin" })]);
    await expectError(
      await as(invitee.accessToken, "POST", "/orgs/invitations/accept", { ticket: first }),
      401,
      "invalid-ticket",
    );
    expect((await as(owner.accessToken, "DELETE", `/orgs/${org.id}/invitations/${second.id}`)).status).toBe(
      204,
    );
    await expectError(
      await as(invitee.accessToken, "POST", "/orgs/invitations/accept", { ticket: latest }),
      401,
      "invalid-ticket",
    );
    await expectError(
      await as(owner.accessToken, "DELETE", `/orgs/${org.id}/invitations/${second.id}`),
      404,
      "not-found",
    );
  });

  // Threat: a plain member inviting outsiders, or an admin inviting an owner to take the org over.
  it("lets owners and admins invite, and only owners invite owners", async () => {
    const [owner, adminUser, member] = [await user(), await user(), await user()];
    const org = await createOrg(owner);
    await addMember(org, adminUser, "admin");
    await addMember(org, member, "member");
    await expectError(await invite(member.accessToken, org.id, uniqueEmail()), 403, "insufficient-org-role");
    await expectError(
      await as(member.accessToken, "GET", `/orgs/${org.id}/invitations`),
      403,
      "insufficient-org-role",
    );
    await expectError(
      await invite(adminUser.accessToken, org.id, uniqueEmail(), "owner"),
      403,
      "insufficient-org-role",
    );
    expect((await invite(adminUser.accessToken, org.id, uniqueEmail(), "member")).status).toBe(201);
    expect((await invite(owner.accessToken, org.id, uniqueEmail(), "owner")).status).toBe(201);
    await expectError(
      await invite(owner.accessToken, org.id, uniqueEmail(), "emperor"),
      400,
      "invalid-request",
    );
  }, 20_000);

  it("is mirrored in the admin API", async () => {
    const owner = await user();
    const org = await createOrg(owner);
    const invitee = await user("by-admin", true);
    const created = await admin("POST", `/orgs/${org.id}/invitations`, {
      email: invitee.user.email,
      role: "owner",
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const listed = (await (await admin("GET", `/orgs/${org.id}/invitations`)).json()) as {
      items: { id: string }[];
    };
    expect(listed.items.map((i) => i.id)).toEqual([id]);
    const ticket = await invitationTicket(invitee.user.email);
    const accepted = await as(invitee.accessToken, "POST", "/orgs/invitations/accept", { ticket });
    expect(await accepted.json()).toMatchObject({ id: org.id, role: "owner" });
    await expectError(await admin("DELETE", `/orgs/${org.id}/invitations/${id}`), 404, "not-found");
    await expectError(await admin("GET", `/orgs/${crypto.randomUUID()}/invitations`), 404, "not-found");
  });
});
