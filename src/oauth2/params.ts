import type { Context } from "hono";
import type { AppEnv } from "../http/app-env";
import { bodyText } from "../http/validation";
import { OAuth2Error } from "./errors";

/**
 * The parameters of an OAuth2 request: the query of a GET, the form body of a POST. RFC 6749 §3.1 and §3.2: a
 * parameter sent twice is an error (an attacker could otherwise smuggle a second value past one check and into
 * another), and so is a body that is not a form (a JSON body silently read as empty would hide the mistake). The one
 * exception is `resource`, which RFC 8707 §2 makes repeatable: all its values are in `resources`.
 */
export class OAuth2Params extends Map<string, string> {
  readonly resources: string[] = [];
}

export async function oauth2Params(c: Context<AppEnv>): Promise<OAuth2Params> {
  let source: URLSearchParams;
  if (c.req.method === "GET" || c.req.method === "HEAD") {
    source = new URL(c.req.url).searchParams;
  } else {
    const type = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase();
    if (type !== "application/x-www-form-urlencoded") {
      throw new OAuth2Error("invalid_request", "the body must be application/x-www-form-urlencoded");
    }
    source = new URLSearchParams(await bodyText(c));
  }
  const params = new OAuth2Params();
  for (const [name, value] of source) {
    if (name === "resource") {
      if (params.resources.length >= 10) throw new OAuth2Error("invalid_target", "at most 10 resources");
      params.resources.push(value);
      continue;
    }
    if (params.has(name)) throw new OAuth2Error("invalid_request", `parameter ${name} is repeated`);
    // Empty parameters count as absent (RFC 6749 §3.1).
    if (value !== "") params.set(name, value);
  }
  return params;
}

/** A bounded string parameter; longer values are refused rather than cut. */
export function param(params: Map<string, string>, name: string, maxLength = 2048): string | undefined {
  const value = params.get(name);
  if (value !== undefined && value.length > maxLength) {
    throw new OAuth2Error("invalid_request", `${name} is longer than ${maxLength} characters`);
  }
  return value;
}

/** A scope parameter as a set of scope tokens (RFC 6749 §3.3), in a stable order. */
export function scopeList(value: string | undefined): string[] {
  if (!value) return [];
  return [...new Set(value.split(" ").filter(Boolean))];
}
