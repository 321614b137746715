import type { Vault } from "../en/vault";

/** The account center's connected accounts (the token vault) in Spanish ("usted"). */
export const vault: Vault = {
  title: "Cuentas conectadas",
  lead: "Cuentas de otros servicios que las aplicaciones que usted autorizó pueden usar en su nombre. Sus claves se quedan aquí: una aplicación solo recibe de ellas un acceso de corta duración.",
  none: "No hay ninguna cuenta conectada.",
  account: "Cuenta",
  apps: "Aplicaciones autorizadas",
  noApps: "Todavía no hay ninguna aplicación autorizada.",
  never: "nunca usada",
  lastUsed: (date, uses) => `usada por última vez el ${date} (${uses}×)`,
};
