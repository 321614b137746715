import type { Fedcm } from "../en/fedcm";

export const fedcm: Fedcm = {
  signedInTitle: "Vous êtes connecté",
  closesItself:
    "Cette fenêtre se ferme d'elle-même. Si elle reste ouverte, fermez-la et revenez au site qui vous a demandé de vous connecter.",
};
