import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/app-env";
import { codeChallengeField, emailField, passwordField } from "../../http/fields";
import { jsonBody } from "../../http/validation";
import { rateLimit } from "../../rate-limits/middleware";
import { signUpEmailPassword } from "./sign-up";
import { signUpOptionsSchema } from "./sign-up-options";

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
