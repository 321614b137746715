import type { Config } from "../config";
import { sha256Hex } from "./crypto";

/** Gravatar URL for an email (`AUTH_GRAVATAR_*`). Gravatar accepts SHA-256 of the trimmed, lower-cased address. */
export async function gravatarUrl(email: string, config: Config): Promise<string> {
  if (!config.gravatar.enabled) return "";
  const hash = await sha256Hex(email.trim().toLowerCase());
  return `https://www.gravatar.com/avatar/${hash}?d=${config.gravatar.default}&r=${config.gravatar.rating}`;
}
