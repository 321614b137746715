import { z } from "zod";
import { callHookAt, type HookDeps, MalformedHookAnswer } from "../hooks/call";
import type { HookEndpoint } from "../hooks/config";
import { metadataSchema } from "../lib/json-metadata";

/**
 * The `PASSWORD_MIGRATION` hook (contract supabase.md §5): `{"type":"password.migration","identifier","password"}`
 * posted, signed and bounded as every hook of move-in.md §5.3 (src/hooks/call.ts: 5 s, fail closed with 503, one
 * `hook.called` audit event). It answers `{"verified":false}` or `{"verified":true,"user":{…}}`; anything else is a
 * failure like no answer. The payload holds a password: it is in no log, no audit event and no error's reason
 * (call.ts writes none of the body, and the reasons below name fields, never values).
 */

/**
 * The profile a verified answer may carry; only these are read, and only for a user it creates (sign-in.ts). Other
 * fields (`id`, `roles`, `disabled`, …) are dropped: the old system vouches for a password, not for privileges here.
 * `null` counts as absent, as the old systems' exports write it.
 */
const profileSchema = z.object({
  displayName: z.string().max(1024).nullish(),
  avatarUrl: z.union([z.literal(""), z.url({ protocol: /^https?$/ }).max(2048)]).nullish(),
  locale: z.string().max(64).nullish(),
  metadata: metadataSchema.nullish(),
  emailVerified: z.boolean().nullish(),
});

export type MigratedProfile = z.output<typeof profileSchema>;

const answerSchema = z.discriminatedUnion("verified", [
  z.object({ verified: z.literal(false) }),
  z.object({ verified: z.literal(true), user: profileSchema }),
]);

export type MigrationAnswer = z.output<typeof answerSchema>;

export async function askOldSystem(
  deps: Pick<HookDeps, "outbound" | "audit">,
  endpoint: HookEndpoint,
  attempt: { identifier: string; password: string; userId: string | null },
): Promise<MigrationAnswer> {
  const payload = { type: "password.migration", identifier: attempt.identifier, password: attempt.password };
  return callHookAt(
    deps,
    "PASSWORD_MIGRATION",
    endpoint,
    payload,
    ({ body }) => {
      const parsed = answerSchema.safeParse(body);
      if (!parsed.success) {
        const where = parsed.error.issues.map((issue) => issue.path.join(".") || "the answer");
        throw new MalformedHookAnswer(
          `not {"verified":false} nor {"verified":true,"user":{…}} (${[...new Set(where)].join(", ")})`,
        );
      }
      return { outcome: parsed.data.verified ? "verified" : "not-verified", value: parsed.data };
    },
    attempt.userId,
  );
}
