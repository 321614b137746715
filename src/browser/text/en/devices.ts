/**
 * The notice of a sign-in from a device not seen before for the user (contract §13). Placeholders: `${displayName}`,
 * `${device}`, `${place}`, `${time}`, `${link}` (the account center, where a session is revoked). `device` names the
 * browser and system read from the User-Agent (src/auth/devices/device-name.ts); `unknownPlace` stands in for
 * `${place}` when Cloudflare does not know where the address is.
 */
export const devices = {
  mail: {
    subject: "New sign-in to your account",
    text: "Hello ${displayName},\n\nYour account was signed in to from a new device: ${device}, ${place}, at ${time}.${risk}\n\nIf it was you, there is nothing to do. If not, sign that session out and change your password:\n${link}\n",
    html: '<p>Hello ${displayName},</p><p>Your account was signed in to from a new device: ${device}, ${place}, at ${time}.${risk}</p><p>If it was you, there is nothing to do. If not, <a href="${link}">sign that session out</a> and change your password.</p>',
  },
  /** A browser (or app) on a system, e.g. "Chrome on macOS". */
  device: (browser: string, system: string) => `${browser} on ${system}`,
  unknownBrowser: "an unknown browser",
  /** `${risk}`: the sign-in's assessed risk (src/risk/), a sentence after the time; empty when none was assessed. */
  risk: {
    low: " We rated this sign-in's risk as low.",
    medium: " We rated this sign-in's risk as medium.",
    high: " We rated this sign-in's risk as high.",
  },
  unknownPlace: "an unknown place",
};

export type Devices = typeof devices;
