import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../app-env";
import { rateLimit } from "../middleware/rate-limit";
import { jsonBody } from "../middleware/validate";
import { signInPasswordlessEmail } from "../services/email-flows";
import { signInOtpEmail, verifyOtpEmail } from "../services/email-otp";
import { signUpOptionsSchema } from "../services/sign-up-options";
import { emailField } from "./schemas";

const emailWithOptions = z.object({ email: emailField, options: signUpOptionsSchema.optional() });

/** signInPasswordlessEmail, signInOTPEmail, verifySignInOTPEmail (contract §3.2). */
export const passwordlessRoutes = new Hono<AppEnv>()
  .post("/signin/passwordless/email", rateLimit("EMAIL", "email"), jsonBody(emailWithOptions), async (c) => {
    const { email, options } = c.req.valid("json");
    await signInPasswordlessEmail(c.var.deps, email, options);
    return c.json("OK");
  })
  .post("/signin/otp/email", rateLimit("EMAIL", "email"), jsonBody(emailWithOptions), async (c) => {
    const { email, options } = c.req.valid("json");
    await signInOtpEmail(c.var.deps, email, options);
    return c.json("OK");
  })
  .post(
    "/signin/otp/email/verify",
    rateLimit("BRUTE_FORCE", "email"),
    jsonBody(z.object({ email: emailField, otp: z.string().min(1).max(12) })),
    async (c) => {
      const { email, otp } = c.req.valid("json");
      return c.json(await verifyOtpEmail(c.var.deps, email, otp, c.req.header("user-agent")));
    },
  );
