import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../app-env";
import { rateLimit } from "../middleware/rate-limit";
import { jsonBody } from "../middleware/validate";
import { signUpEmailPassword } from "../services/sign-up";
import { signUpOptionsSchema } from "../services/sign-up-options";
import { codeChallengeField, emailField, passwordField } from "./schemas";

const emailPasswordBody = z.object({
  email: emailField,
  password: passwordField,
  options: signUpOptionsSchema.optional(),
  codeChallenge: codeChallengeField,
});

export const signUpRoutes = new Hono<AppEnv>().post(
  "/signup/email-password",
  rateLimit("SIGNUPS"),
  rateLimit("EMAIL", "email"),
  jsonBody(emailPasswordBody),
  async (c) => c.json(await signUpEmailPassword(c.var.deps, c.req.valid("json"), c.req.header("user-agent"))),
);
