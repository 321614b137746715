/** The hosted sign-in of a first-party app (`{prefix}/signin`, `/signup`, `/reset`, contract §13). */
export const hosted = {
  toContinueToApp: "to continue to the app",
};

export type Hosted = typeof hosted;
