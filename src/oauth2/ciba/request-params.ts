import { knownAcrValues } from "../../browser/acr";
import type { OAuth2ClientRow } from "../../db/schema";
import { OAuth2Error } from "../errors";
import { type OAuth2Params, param, scopeList } from "../params";

/**
 * The parameters of a backchannel authentication request (OpenID CIBA Core 1.0 §7.1), read and checked before
 * anything is looked up or stored: what the client asks, for whom (one hint), and what the user will be shown.
 */

/** Seconds a request waits for the user unless the client asks otherwise (`requested_expiry`), and the bounds. */
export const DEFAULT_EXPIRY_SECONDS = 300;
export const MIN_EXPIRY_SECONDS = 10;
export const MAX_EXPIRY_SECONDS = 1800;
/** §7.3 `interval`: the least wait between polls; `slow_down` adds five seconds (device.ts). */
export const INTERVAL_SECONDS = 5;

/**
 * `binding_message` (§7.1): at most 64 characters of letters and digits (any script), spaces and basic punctuation.
 * Nothing else: no control or formatting characters (a bidi override turns the message around on the page), no
 * markup, no line breaks, so the user reads on their phone what the client's screen shows.
 */
const BINDING_MESSAGE = /^[\p{L}\p{M}\p{N} .,:;!?'"()\-_/#&+@%*€$£¥=]{1,64}$/u;

export function checkBindingMessage(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!BINDING_MESSAGE.test(value) || value.trim() !== value) {
    throw new OAuth2Error(
      "invalid_binding_message",
      "binding_message must be 1 to 64 letters, digits, spaces and basic punctuation, without control characters",
    );
  }
  return value;
}

/** Who the request names: exactly one of the hints (§7.1); `login_hint_token` is not supported here. */
export type Hint = { kind: "login_hint"; value: string } | { kind: "id_token_hint"; value: string };

export interface BackchannelParams {
  scopes: string[];
  hint: Hint;
  bindingMessage?: string;
  acrValues: string[];
  expiresIn: number;
  /** Ping mode (§7.1): the bearer token the ping carries back to the client. */
  notificationToken?: string;
}

function readHint(params: OAuth2Params): Hint {
  if (params.has("login_hint_token")) {
    throw new OAuth2Error(
      "invalid_request",
      "login_hint_token is not supported: send login_hint or id_token_hint",
    );
  }
  const login = param(params, "login_hint", 320);
  const idToken = param(params, "id_token_hint", 8192);
  if ((login ? 1 : 0) + (idToken ? 1 : 0) !== 1) {
    throw new OAuth2Error("invalid_request", "send exactly one of login_hint and id_token_hint");
  }
  return login ? { kind: "login_hint", value: login.trim() } : { kind: "id_token_hint", value: idToken! };
}

function readExpiry(params: OAuth2Params): number {
  const asked = param(params, "requested_expiry", 10);
  if (asked === undefined) return DEFAULT_EXPIRY_SECONDS;
  const seconds = /^\d{1,6}$/.test(asked) ? Number(asked) : Number.NaN;
  if (!(seconds >= MIN_EXPIRY_SECONDS && seconds <= MAX_EXPIRY_SECONDS)) {
    throw new OAuth2Error(
      "invalid_request",
      `requested_expiry must be whole seconds from ${MIN_EXPIRY_SECONDS} to ${MAX_EXPIRY_SECONDS}`,
    );
  }
  return seconds;
}

/** The request's parameters, checked against what an admin allowed the client (its delivery mode, its scopes). */
export function readBackchannelParams(client: OAuth2ClientRow, params: OAuth2Params): BackchannelParams {
  if (params.has("request")) {
    throw new OAuth2Error("invalid_request", "signed authentication requests (request) are not supported");
  }
  if (params.has("user_code")) {
    throw new OAuth2Error(
      "invalid_request",
      "user_code is not supported (backchannel_user_code_parameter_supported)",
    );
  }
  const scopes = scopeList(param(params, "scope", 1000));
  if (!scopes.includes("openid")) throw new OAuth2Error("invalid_scope", "scope must include openid");
  const outside = scopes.filter((scope) => !client.scopes.includes(scope));
  if (outside.length > 0) {
    throw new OAuth2Error("invalid_scope", `scope not allowed for this client: ${outside.join(" ")}`);
  }
  const hint = readHint(params);
  const bindingMessage = checkBindingMessage(params.get("binding_message"));
  const acrValues = knownAcrValues(scopeList(param(params, "acr_values", 500)));
  const expiresIn = readExpiry(params);
  const token = param(params, "client_notification_token", 1024);
  if (client.backchannelTokenDeliveryMode === "ping") {
    // §7.1: required in ping mode; a bearer token of the client's, so at least 128 bits written out (RFC 6750).
    if (!token || !/^[\x21-\x7e]{22,1024}$/.test(token)) {
      throw new OAuth2Error(
        "invalid_request",
        "client_notification_token is required in ping mode: 22 to 1024 printable characters",
      );
    }
  }
  return {
    scopes,
    hint,
    ...(bindingMessage ? { bindingMessage } : {}),
    acrValues,
    expiresIn,
    ...(client.backchannelTokenDeliveryMode === "ping" && token ? { notificationToken: token } : {}),
  };
}
