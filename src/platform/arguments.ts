import { z } from "zod";
import { AppError } from "../errors";

/**
 * The binding's arguments come from another Worker, typed only by its author: each is checked here, and a wrong one is
 * the catalogue's `invalid-request` (as a value, src/platform/results.ts), never a fault.
 */

const authenticateOptions = z
  .strictObject({ cookie: z.boolean().optional(), live: z.boolean().optional() })
  .optional();

const verifyTokenOptions = z
  .strictObject({ audience: z.string().min(1).max(1000).optional(), live: z.boolean().optional() })
  .optional();

export function parsed<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
  throw new AppError("invalid-request", `${what}: ${where}${issue?.message ?? "invalid"}`);
}

export const authenticateArguments = (request: unknown, options: unknown) => {
  if (!(request instanceof Request)) {
    throw new AppError(
      "invalid-request",
      "authenticate: the first argument is the Request the consumer received",
    );
  }
  return { request, options: parsed(authenticateOptions, options, "authenticate's options") ?? {} };
};

export const verifyTokenOptionsOf = (options: unknown) =>
  parsed(verifyTokenOptions, options, "verifyToken's options") ?? {};
