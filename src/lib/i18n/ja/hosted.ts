import type { Hosted } from "../en/hosted";

export const hosted: Hosted = {
  toContinueToApp: "to continue to the app",
};
