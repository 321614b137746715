import type { Fedcm } from "../en/fedcm";

export const fedcm: Fedcm = {
  signedInTitle: "Sie sind angemeldet",
  closesItself:
    "Dieses Fenster schließt sich von selbst. Bleibt es offen, schließen Sie es und kehren Sie zu der Website zurück, die Sie um die Anmeldung gebeten hat.",
};
