import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/app-env";
import { operation } from "../../http/documented";
import { signUpChecks } from "../../http/sign-up-gate";
import { jsonBody } from "../../http/validation";
import { metadataSchema } from "../../lib/json-metadata";
import { sessionPayloadSchema } from "../new-sessions";
import { signInScope } from "../sign-in";
import { signUpOptionsSchema } from "../sign-up-options";
import { signInAnonymous } from "./anonymous";

const body = z.object({
  displayName: signUpOptionsSchema.shape.displayName,
  locale: z.string().min(2).max(3).optional(),
  metadata: metadataSchema.optional(),
});

/** signInAnonymous (contract §3.2); the client may POST it with no body. */
export const anonymousRoutes = new Hono<AppEnv>().post(
  "/signin/anonymous",
  operation({
    summary: "Sign in anonymously",
    description:
      "A user with no credentials (`isAnonymous: true`, role `anonymous`), who can later become a regular one " +
      "(`POST /user/deanonymize`). Off unless `AUTH_ANONYMOUS_USERS_ENABLED` (409 `disabled-endpoint`). The body " +
      "may be empty.",
    answers: { 200: { description: "A session for the new anonymous user.", schema: sessionPayloadSchema } },
  }),
  jsonBody(body),
  signUpChecks(),
  async (c) => c.json(await signInAnonymous(signInScope(c, "anonymous"), c.req.valid("json"))),
);
