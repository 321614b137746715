import { z } from "zod";
import { isLoopbackHost } from "../lib/loopback";

/**
 * The pieces every settings slice is made of (src/config.ts for the core, each feature's settings.ts for its own):
 * environment variables keep the reference's names (contract §9); the parsed settings are nested by what they are
 * about (`config.lockout.threshold`, `config.urls.auth("/verify")`).
 */

/** `true`/`false`/`1`/`0`, or the fallback when unset or empty. */
export const bool = (fallback: boolean) =>
  z
    .enum(["true", "false", "1", "0", ""])
    .optional()
    .transform((v) => (v === undefined || v === "" ? fallback : v === "true" || v === "1"));

/** A comma-separated list, trimmed, empty items dropped; the fallback when unset. */
export const list = (fallback: string[] = []) =>
  z
    .string()
    .optional()
    .transform((v) =>
      v === undefined
        ? fallback
        : v
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean),
    );

export const seconds = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** An http(s) URL without its trailing slashes. */
export const url = z.url({ protocol: /^https?$/ }).transform((v) => v.replace(/\/+$/, ""));

/** Hosts a development-only switch may run on: the developer's own machine. */
export const isLocalUrl = (value: string): boolean => isLoopbackHost(new URL(value).hostname);

/**
 * A group of settings: the environment variables it reads (a zod object keyed by their names, so a bad value is
 * reported under its variable's name) and how they become the parsed settings, given what was parsed before it (the
 * core, for a feature's slice) and the raw environment (for the families of variables read by prefix, such as
 * `AUTH_PROVIDER_<NAME>_…`).
 */
export interface SettingsSlice<Shape extends z.ZodRawShape, Before, Out extends object> {
  readonly vars: z.ZodObject<Shape>;
  readonly resolve: (
    vars: z.output<z.ZodObject<Shape>>,
    before: Before,
    env: Readonly<Record<string, unknown>>,
  ) => Out;
}

export const settingsSlice = <Shape extends z.ZodRawShape, Before, Out extends object>(
  vars: z.ZodObject<Shape>,
  resolve: SettingsSlice<Shape, Before, Out>["resolve"],
): SettingsSlice<Shape, Before, Out> => ({ vars, resolve });
