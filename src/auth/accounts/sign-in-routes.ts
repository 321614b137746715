import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/app-env";
import { emailField, passwordField } from "../../http/fields";
import { jsonBody } from "../../http/validation";
import { rateLimit } from "../../rate-limits/middleware";
import { signInEmailPassword } from "./sign-in";

const emailPasswordBody = z.object({ email: emailField, password: passwordField });

export const signInRoutes = new Hono<AppEnv>().post(
  "/signin/email-password",
  rateLimit("BRUTE_FORCE", "email"),
  jsonBody(emailPasswordBody),
  async (c) => c.json(await signInEmailPassword(c.var.deps, c.req.valid("json"), c.req.header("user-agent"))),
);
