import { AppError } from "../errors";
import { callHook, type HookDeps, isHookConfigured, MalformedHookAnswer } from "./call";

/** A message longer than this is cut: it is shown to whoever signs up, as the app wrote it. */
const MAX_MESSAGE_LENGTH = 500;

/**
 * `BEFORE_USER_CREATED` (contract move-in §5.3): asks the app whether `user` (the User resource it is about to be)
 * may be born. `{"decision":"continue"}` or 204 goes on; `{"decision":"reject","message":"…"}` refuses with 403
 * `forbidden` and the app's message; anything else, or no answer, refuses with 503 (call.ts). Not configured: goes on.
 */
export async function beforeUserCreated(deps: HookDeps, user: { id: string }): Promise<void> {
  if (!isHookConfigured(deps, "BEFORE_USER_CREATED")) return;
  const decision = await callHook(
    deps,
    "BEFORE_USER_CREATED",
    { user },
    ({ status, body }) => {
      if (status === 204 && body === undefined) return { outcome: "continue", value: null };
      const answer = body as { decision?: unknown; message?: unknown } | null;
      if (answer?.decision === "continue") return { outcome: "continue", value: null };
      if (answer?.decision === "reject") {
        const message =
          typeof answer.message === "string" && answer.message.trim() !== ""
            ? answer.message.slice(0, MAX_MESSAGE_LENGTH)
            : "the app refused this sign-up";
        return { outcome: "reject", value: message };
      }
      throw new MalformedHookAnswer('no "decision" of "continue" or "reject"');
    },
    user.id,
  );
  if (decision !== null) throw new AppError("forbidden", decision, "refused by BEFORE_USER_CREATED");
}
