import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/app-env";
import { jsonBody } from "../../http/validation";
import { rateLimit } from "../../rate-limits/middleware";
import { signUpOptionsSchema } from "../accounts/sign-up-options";
import { signInPasswordlessSms, verifySignInPasswordlessSms } from "./sms-sign-in";

const phoneNumberField = z.string().min(1).max(32);
const codeRequest = z.object({ phoneNumber: phoneNumberField, options: signUpOptionsSchema.optional() });

/**
 * signInPasswordlessSms and verifySignInPasswordlessSms (contract §3.2), and the client's sign-up variant
 * (client.md §15), which refuses a number that already has an account.
 */
export const smsRoutes = new Hono<AppEnv>()
  .post("/signin/passwordless/sms", rateLimit("SMS", "phoneNumber"), jsonBody(codeRequest), async (c) => {
    await signInPasswordlessSms(c.var.deps, c.req.valid("json"), "sign-in");
    return c.json("OK");
  })
  .post(
    "/signup/passwordless/sms",
    rateLimit("SIGNUPS"),
    rateLimit("SMS", "phoneNumber"),
    jsonBody(codeRequest),
    async (c) => {
      await signInPasswordlessSms(c.var.deps, c.req.valid("json"), "sign-up");
      return c.json("OK");
    },
  )
  .post(
    "/signin/passwordless/sms/otp",
    rateLimit("BRUTE_FORCE", "phoneNumber"),
    jsonBody(z.object({ phoneNumber: phoneNumberField, otp: z.string().min(1).max(12) })),
    async (c) =>
      c.json(await verifySignInPasswordlessSms(c.var.deps, c.req.valid("json"), c.req.header("user-agent"))),
  );
