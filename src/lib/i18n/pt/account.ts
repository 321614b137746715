import type { Account } from "../en/account";

export const account: Account = {
  title: "Your account",
};
