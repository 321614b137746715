import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../app-env";
import { rateLimit } from "../middleware/rate-limit";
import { jsonBody } from "../middleware/validate";
import { signInEmailPassword } from "../services/sign-in";
import { emailField, passwordField } from "./schemas";

const emailPasswordBody = z.object({ email: emailField, password: passwordField });

export const signInRoutes = new Hono<AppEnv>().post(
  "/signin/email-password",
  rateLimit("BRUTE_FORCE", "email"),
  jsonBody(emailPasswordBody),
  async (c) => c.json(await signInEmailPassword(c.var.deps, c.req.valid("json"), c.req.header("user-agent"))),
);
