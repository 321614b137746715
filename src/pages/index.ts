/**
 * What the rest of the service may use of the built-in pages: the account center (src/account-center/) checks its
 * form posts as the pages do, re-authenticates with their proofs and form, and names providers as the sign-in page's
 * buttons do. Everything else in src/pages/ is internal to it (.dependency-cruiser.cjs).
 */

export { providerName } from "../browser/provider-names";
export { isSameOrigin } from "../browser/same-origin";
export { abilitiesOf, provePasskey, provePassword, proveTotp } from "./reauth-proofs";
export { reauthForm } from "./reauth-render";
export { reauthPasskeyScript } from "./reauth-script";
export { signInMessage } from "./sign-in-routes";
export { signalsOnPage } from "./signals-page";
