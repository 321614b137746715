import { describe, expect, it } from "vitest";
import { expectError, NO_VERIFICATION, service, signUp } from "../../helpers";
import { userD1 } from "../../support/shards";

const svc = service(NO_VERIFICATION);

describe("GET /user", () => {
  it("answers the signed-in user's profile", async () => {
    const session = await signUp(svc, undefined, { displayName: "Ada", metadata: { a: 1 } });
    const response = await svc.get("/user", session.accessToken);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(session.user);
  });

  it("answers 401 unauthorized without a token, with a bad one, and for a deleted user", async () => {
    const body = await expectError(await svc.get("/user"), 401, "unauthorized");
    expect(body.message).toBe("missing or invalid access token");
    await expectError(await svc.get("/user", "not.a.jwt"), 401, "unauthorized");
    const session = await signUp(svc);
    await userD1(session.user.id).prepare("DELETE FROM users WHERE id = ?").bind(session.user.id).run();
    await expectError(await svc.get("/user", session.accessToken), 401, "unauthorized");
  });
});
