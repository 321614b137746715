import * as tables from "../db/tables/vault";
import { vaultRoutes } from "./routes";
import { vaultSettings } from "./settings";

/** The token vault: provider accounts a user connected, their tokens given to the clients the user let (operators.md §3). */
export const vaultFeature = {
  name: "vault",
  settings: vaultSettings,
  tables,
  routes: () => ({ auth: vaultRoutes }),
};
