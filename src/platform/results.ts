import { AppError, ConfigError } from "../errors";
import type { BindingError } from "./types";

/**
 * Errors cross the binding as values (contract platform.md §1): Workers RPC would keep only a thrown error's message
 * and standard name, so a consumer could not tell a refused argument from an outage. A catalogue error keeps its code
 * and message; anything else (D1 or a Durable Object failing, the configuration) is `service-unavailable`, its
 * detail in this Worker's log only.
 */
export function errorValue(error: unknown): BindingError {
  if (error instanceof AppError) {
    if (error.code === "service-unavailable" || error.status >= 500) logFault(error);
    return { ok: false, error: { code: error.code, message: error.message } };
  }
  logFault(error);
  const message =
    error instanceof ConfigError
      ? "the auth service is not configured: see its log"
      : "the auth service cannot answer this right now; try again shortly";
  return { ok: false, error: { code: "service-unavailable", message } };
}

/** Runs one call of the binding: its answer, or its failure as a value. */
export async function asValue<T>(work: () => Promise<T>): Promise<T | BindingError> {
  try {
    return await work();
  } catch (error) {
    return errorValue(error);
  }
}

export const refusal = (code: BindingError["error"]["code"], message: string): BindingError => ({
  ok: false,
  error: { code, message },
});

function logFault(error: unknown): void {
  const detail =
    error instanceof Error
      ? { name: error.name, message: error.message, reason: (error as AppError).reason, stack: error.stack }
      : error;
  console.error(JSON.stringify({ level: "error", what: "service-binding", detail }));
}
