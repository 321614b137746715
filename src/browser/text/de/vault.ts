import type { Vault } from "../en/vault";

/** The account center's connected accounts (the token vault) in German (formal "Sie"). */
export const vault: Vault = {
  title: "Verbundene Konten",
  lead: "Konten bei anderen Diensten, die von Ihnen zugelassene Apps für Sie nutzen dürfen. Ihre Schlüssel bleiben hier: Eine App erhält davon nur einen kurzlebigen Zugang.",
  none: "Kein Konto ist verbunden.",
  account: "Konto",
  apps: "Zugelassene Apps",
  noApps: "Noch keine App zugelassen.",
  never: "nie genutzt",
  lastUsed: (date, uses) => `zuletzt genutzt am ${date} (${uses}×)`,
};
