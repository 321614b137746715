// The suite's answer check (answers.ts) is what keeps the OpenAPI documents true: every answer a test gets through
// service() must be a status the operation lists, with a body its schema describes. These prove the check refuses.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SERVER } from "../helpers";
import { checkAnswer } from "./answers";

const json = (body: unknown, status: number) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

describe("the OpenAPI answer check", () => {
  it("passes an answer the document describes", async () => {
    await checkAnswer(env, "GET", `${SERVER}/auth/v1/version`, json({ version: "0.1.0" }, 200));
    // An error status falls to the API's error answer.
    const error = { status: 401, message: "missing or invalid access token", error: "unauthorized" };
    await checkAnswer(env, "GET", `${SERVER}/auth/v1/user`, json(error, 401));
  });

  it("refuses a status the operation does not list", async () => {
    await expect(
      checkAnswer(env, "GET", `${SERVER}/auth/v1/version`, json({ version: "0.1.0" }, 201)),
    ).rejects.toThrow(/GET \/version answered 201, which its OpenAPI document does not list/);
  });

  it("refuses a body the schema does not describe, naming the field", async () => {
    await expect(
      checkAnswer(env, "GET", `${SERVER}/auth/v1/version`, json({ version: 1 }, 200)),
    ).rejects.toThrow(/does not describe.*version/);
    await expect(
      checkAnswer(
        env,
        "GET",
        `${SERVER}/storage/v1/files/2c5fb4bd-5a43-4ae8-8e0b-0e2b1c2b6f0e/presignedurl`,
        json({ url: 3 }, 200),
      ),
    ).rejects.toThrow(/does not describe/);
  });

  it("refuses an error body outside the contract's shape", async () => {
    await expect(
      checkAnswer(env, "GET", `${SERVER}/auth/v1/user`, json({ message: "no" }, 401)),
    ).rejects.toThrow(/does not describe/);
  });
});
