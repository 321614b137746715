/** The account center's connected accounts (the token vault, contract operators.md §3) in English. */
export const vault = {
  title: "Connected accounts",
  lead: "Accounts at other services that apps you allowed may use for you. Their keys stay here: an app gets only a short-lived access from them.",
  none: "No account is connected.",
  account: "Account",
  apps: "Apps allowed",
  noApps: "No app allowed yet.",
  never: "never used",
  lastUsed: (date: string, uses: number) => `last used ${date} (${uses}×)`,
};

export type Vault = typeof vault;
