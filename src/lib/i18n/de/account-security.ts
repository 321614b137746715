import type { AccountSecurity } from "../en/account-security";

export const accountSecurity: AccountSecurity = {
  title: "Security",
};
