import type { Vault } from "../en/vault";

/** The account center's connected accounts (the token vault) in French ("vous"). */
export const vault: Vault = {
  title: "Comptes connectés",
  lead: "Des comptes d’autres services que les applications que vous avez autorisées peuvent utiliser pour vous. Leurs clés restent ici : une application n’en reçoit qu’un accès de courte durée.",
  none: "Aucun compte n’est connecté.",
  account: "Compte",
  apps: "Applications autorisées",
  noApps: "Aucune application autorisée pour l’instant.",
  never: "jamais utilisée",
  lastUsed: (date, uses) => `utilisée pour la dernière fois le ${date} (${uses}×)`,
};
