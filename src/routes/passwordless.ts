import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../app-env";
import { jsonBody } from "../middleware/validate";
import { signInPasswordlessEmail } from "../services/email-flows";
import { signUpOptionsSchema } from "../services/sign-up-options";
import { emailField } from "./schemas";

const emailWithOptions = z.object({ email: emailField, options: signUpOptionsSchema.optional() });

/** signInPasswordlessEmail (contract §3.2). */
export const passwordlessRoutes = new Hono<AppEnv>().post(
  "/signin/passwordless/email",
  jsonBody(emailWithOptions),
  async (c) => {
    const { email, options } = c.req.valid("json");
    await signInPasswordlessEmail(c.var.deps, email, options);
    return c.json("OK");
  },
);
