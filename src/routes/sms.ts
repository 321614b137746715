import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../app-env";
import { rateLimit } from "../middleware/rate-limit";
import { jsonBody } from "../middleware/validate";
import { signUpOptionsSchema } from "../services/sign-up-options";
import { signInPasswordlessSms, verifySignInPasswordlessSms } from "../services/sms-sign-in";

const phoneNumberField = z.string().min(1).max(32);

/** signInPasswordlessSms and verifySignInPasswordlessSms (contract §3.2). */
export const smsRoutes = new Hono<AppEnv>()
  .post(
    "/signin/passwordless/sms",
    rateLimit("SMS", "phoneNumber"),
    jsonBody(z.object({ phoneNumber: phoneNumberField, options: signUpOptionsSchema.optional() })),
    async (c) => {
      await signInPasswordlessSms(c.var.deps, c.req.valid("json"));
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
