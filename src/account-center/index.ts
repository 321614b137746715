/**
 * The account center (contract §13): a built-in page at `{prefix}/account` where a signed-in person manages their
 * own account. What the app mounts; everything else in src/account-center/ is internal to it.
 */
export { accountCenterRoutes } from "./routes";
