import { FEDCM_PATH } from "../browser/session";
import type { Config } from "../config";
import { brandOf } from "../http/brand";
import type { Deps } from "../http/deps";
import { textOn } from "../lib/brand-colours";
import { loginPopupUrl } from "./login-popup";

/**
 * The documents a browser reads before its FedCM prompt (W3C Federated Credential Management): the well-known file
 * (§ The Well-Known File, #idp-api-well-known) at the origin's root, and the config file (§ The config file,
 * #idp-api-config-file) that names every endpoint. Both are fetched without cookies and without the relying party's
 * origin, so they are the same for everyone and may be cached.
 */

/** The FedCM endpoints, under the auth API (its path is the fedcm_session cookie's, src/browser/session.ts). */
export const ENDPOINTS = {
  config: `${FEDCM_PATH}/config.json`,
  accounts: `${FEDCM_PATH}/accounts`,
  clientMetadata: `${FEDCM_PATH}/client-metadata`,
  assertion: `${FEDCM_PATH}/assertion`,
  disconnect: `${FEDCM_PATH}/disconnect`,
} as const;

/** The config file's URL: what a relying party passes as `configURL`. */
export const configUrl = (config: Config) => config.urls.auth(ENDPOINTS.config);

/**
 * Where the browser sends a person who is not signed in (the config file's `login_url`), in a pop-up: the hosted
 * sign-in page, then the page that closes the pop-up (login-popup.ts).
 */
const loginUrl = loginPopupUrl;

/**
 * The well-known file. `accounts_endpoint` and `login_url` beside `provider_urls` (the current text: either the one
 * or the two; with a client metadata endpoint, the two) let a browser accept the config file at any path.
 */
export function wellKnownFile(config: Config) {
  return {
    provider_urls: [configUrl(config)],
    accounts_endpoint: config.urls.auth(ENDPOINTS.accounts),
    login_url: loginUrl(config),
  };
}

/**
 * The config file, with the brand of the hosted pages (the console's over `AUTH_BRAND_*`): its name and colour
 * for the prompt's button, its logo as the icon when it has one. The browser wants square icons of a stated size;
 * the logo's is not known here, so none is stated (the prompt then scales it).
 */
export async function configFile(deps: Deps) {
  const { config } = deps;
  const brand = await brandOf(deps);
  const branding = {
    ...(brand.name ? { name: brand.name } : {}),
    ...(brand.color ? { background_color: brand.color, color: textOn(brand.color) } : {}),
    ...(brand.logoUrl ? { icons: [{ url: brand.logoUrl }] } : {}),
  };
  return {
    accounts_endpoint: config.urls.auth(ENDPOINTS.accounts),
    client_metadata_endpoint: config.urls.auth(ENDPOINTS.clientMetadata),
    id_assertion_endpoint: config.urls.auth(ENDPOINTS.assertion),
    disconnect_endpoint: config.urls.auth(ENDPOINTS.disconnect),
    login_url: loginUrl(config),
    ...(Object.keys(branding).length ? { branding } : {}),
  };
}
