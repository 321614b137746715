import type { Devices } from "../en/devices";

export const devices: Devices = {
  mail: {
    subject: "Neue Anmeldung bei Ihrem Konto",
    text: "Hallo ${displayName},\n\njemand hat sich von einem neuen Gerät aus bei Ihrem Konto angemeldet: ${device}, ${place}, am ${time}.${risk}\n\nWenn Sie das waren, ist nichts zu tun. Wenn nicht, melden Sie diese Sitzung ab und ändern Sie Ihr Passwort:\n${link}\n",
    html: '<p>Hallo ${displayName},</p><p>jemand hat sich von einem neuen Gerät aus bei Ihrem Konto angemeldet: ${device}, ${place}, am ${time}.${risk}</p><p>Wenn Sie das waren, ist nichts zu tun. Wenn nicht, <a href="${link}">melden Sie diese Sitzung ab</a> und ändern Sie Ihr Passwort.</p>',
  },
  device: (browser: string, system: string) => `${browser} unter ${system}`,
  unknownBrowser: "ein unbekannter Browser",
  risk: {
    low: " Wir haben das Risiko dieser Anmeldung als niedrig eingestuft.",
    medium: " Wir haben das Risiko dieser Anmeldung als mittel eingestuft.",
    high: " Wir haben das Risiko dieser Anmeldung als hoch eingestuft.",
  },
  unknownPlace: "ein unbekannter Ort",
};
