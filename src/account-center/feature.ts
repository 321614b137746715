import { Hono } from "hono";
import type { AppEnv } from "../http/app-env";
import { accountCenterRoutes } from "./routes";

/** The account center (contract §13): its own pages, served whether or not the OAuth2 provider is on. */
export const accountCenterFeature = {
  name: "account-center",
  routes: () => ({ pages: new Hono<AppEnv>().route("/account", accountCenterRoutes) }),
};
