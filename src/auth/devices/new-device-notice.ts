import { createMiddleware } from "hono/factory";
import { methodOf } from "../../audit/events";
import type { UserRow } from "../../db/schema";
import type { AppEnv } from "../../http/app-env";
import { logError } from "../../http/context";
import type { Deps } from "../../http/deps";
import { rememberDevice } from "../lockout";
import { newDeviceCookie, readDeviceCookie, writeDeviceCookie } from "./device-cookie";
import { deviceKeys } from "./device-keys";
import { type DeviceName, deviceNameOf } from "./device-name";
import { recordSighting } from "./known-devices";
import { sendNewDeviceMail } from "./new-device-mail";

/**
 * The new-device notice (contract §13), around every route of the auth API: when the request started a session
 * (`createSession` marks `deps.visitor.signedIn`, whatever the method: password, link, code, passkey, provider,
 * the built-in page), the answer gets the device cookie, and after the answer the device is recorded and, when it is
 * new to a user who has others, the user is mailed. Nothing here changes or delays the sign-in's answer: a failure is
 * logged and the sign-in stands (a notice is worth less than the sign-in it is about).
 */
export function newDeviceNotice() {
  return createMiddleware<AppEnv>(async (c, next) => {
    await next();
    const deps = c.var.deps;
    const user = deps?.visitor.signedIn;
    // An answer that failed after the session was made gave the client nothing to sign in with.
    if (!user || c.res.status >= 400) return;
    // Anonymous users have no mailbox to warn and nothing a stranger would take over. A personal access token is a
    // script's, often run from a fresh cloud address each time; the user made it while signed in, and a notice per
    // CI run would teach them to ignore the notice (docs/protection.md).
    if (user.isAnonymous || methodOf(c.req.path) === "pat") return;
    const cookie = readDeviceCookie(c);
    const given = cookie ?? newDeviceCookie();
    try {
      writeDeviceCookie(c, given);
    } catch (error) {
      logError(c.var.requestId, "device cookie", error);
    }
    // The lockout's known devices (auth/lockout/known-devices.ts): the cookie the request brought, or the one given
    // now to a browser that keeps it. Not a fresh cookie given to a client that drops it (an app on another site, a
    // script): it never comes back, and would only push the account's real devices out of the record.
    if (cookie || keepsCookie(c.req.header("sec-fetch-site"))) {
      deps.background(
        rememberDevice(deps, user.id, given).catch((error) =>
          logError(c.var.requestId, "known device", error),
        ),
      );
    }
    const name = deviceNameOf(c.req.header("user-agent"));
    deps.background(
      noticeDevice(deps, user, cookie, name).catch((error) =>
        logError(c.var.requestId, "new-device notice", error),
      ),
    );
  });
}

/**
 * A browser tells where a request comes from (`Sec-Fetch-Site`): from this site's own pages or a same-site app
 * (`same-origin`, `same-site`), or typed or followed from a mail (`none`), it keeps the first-party cookie it is
 * given. From another site it keeps it only with credentials and third-party cookies allowed: such a cookie is
 * remembered when it first comes back, as any client's that keeps cookies.
 */
const keepsCookie = (site: string | undefined) =>
  site === "same-origin" || site === "same-site" || site === "none";

async function noticeDevice(deps: Deps, user: UserRow, cookie: string | null, name: DeviceName) {
  const at = deps.now();
  const keys = await deviceKeys(
    deps.config.AUTH_ENCRYPTION_KEY!,
    user.id,
    cookie,
    name,
    deps.visitor.address,
  );
  const sighting = await recordSighting(deps, user.id, keys, at);
  if (sighting === "new") await sendNewDeviceMail(deps, user, { name, place: deps.visitor.place, at });
}
