import type { UserRow } from "../../db/schema";
import { logError } from "../../http/context";
import type { Deps } from "../../http/deps";
import { rememberDevice } from "../lockout";
import { newDeviceCookie } from "./device-cookie";
import { deviceKeys } from "./device-keys";
import { type DeviceName, deviceNameOf } from "./device-name";
import { recordSighting } from "./known-devices";
import { sendNewDeviceMail } from "./new-device-mail";

/**
 * The new-device notice (contract §13), at the end of every sign-in that made a session (src/auth/sign-in/pipeline.ts,
 * whatever the method: password, link, code, passkey, provider, the built-in page): the answer gets the device cookie,
 * and after the answer the device is recorded and, when it is new to a user who has others, the user is mailed.
 * Nothing here changes or delays the sign-in's answer: a failure is logged and the sign-in stands (a notice is worth
 * less than the sign-in it is about).
 */
export function noticeDevice(
  /** The sign-in's scope (../sign-in/scope.ts): what the request showed, and how its answer gets the cookie. */
  scope: {
    deps: Deps;
    requestId: string;
    userAgent: string | undefined;
    fetchSite: string | undefined;
    giveDeviceCookie: (value: string) => void;
  },
  user: UserRow,
  method: string | null,
): void {
  const { deps } = scope;
  // Anonymous users have no mailbox to warn and nothing a stranger would take over. A personal access token is a
  // script's, often run from a fresh cloud address each time; the user made it while signed in, and a notice per
  // CI run would teach them to ignore the notice (docs/protection.md).
  if (user.isAnonymous || method === "pat") return;
  const cookie = deps.visitor.deviceCookie;
  const given = cookie ?? newDeviceCookie();
  scope.giveDeviceCookie(given);
  // The lockout's known devices (auth/lockout/known-devices.ts): the cookie the request brought, or the one given
  // now to a browser that keeps it. Not a fresh cookie given to a client that drops it (an app on another site, a
  // script): it never comes back, and would only push the account's real devices out of the record.
  if (cookie || keepsCookie(scope.fetchSite)) {
    deps.background(
      rememberDevice(deps, user.id, given).catch((error) => logError(scope.requestId, "known device", error)),
    );
  }
  const name = deviceNameOf(scope.userAgent);
  deps.background(
    mailIfNew(deps, user, cookie, name).catch((error) =>
      logError(scope.requestId, "new-device notice", error),
    ),
  );
}

/**
 * A browser tells where a request comes from (`Sec-Fetch-Site`): from this site's own pages or a same-site app
 * (`same-origin`, `same-site`), or typed or followed from a mail (`none`), it keeps the first-party cookie it is
 * given. From another site it keeps it only with credentials and third-party cookies allowed: such a cookie is
 * remembered when it first comes back, as any client's that keeps cookies.
 */
const keepsCookie = (site: string | undefined) =>
  site === "same-origin" || site === "same-site" || site === "none";

async function mailIfNew(deps: Deps, user: UserRow, cookie: string | null, name: DeviceName) {
  const at = deps.now();
  const keys = await deviceKeys(
    deps.config.secrets.encryptionKey,
    user.id,
    cookie,
    name,
    deps.visitor.address,
  );
  const sighting = await recordSighting(deps, user.id, keys, at);
  if (sighting === "new") {
    const { place, riskLevel } = deps.visitor;
    await sendNewDeviceMail(deps, user, { name, place, at, riskLevel });
  }
}
