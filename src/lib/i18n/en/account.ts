/** The account center (`{prefix}/account`, contract §13): what a signed-in user sees of their own account. */
export const account = {
  title: "Your account",
};

export type Account = typeof account;
