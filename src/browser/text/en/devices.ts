/**
 * The notice of a sign-in from a device not seen before for the user (contract §13). Placeholders: `${displayName}`,
 * `${device}`, `${place}`, `${time}`, `${link}` (the account center, where a session is revoked). `device` names the
 * browser and system read from the User-Agent (src/auth/devices/device-name.ts); `unknownPlace` stands in for
 * `${place}` when Cloudflare does not know where the address is.
 */
export const devices = {
  mail: {
    subject: "New sign-in to your account",
    text: "Hello ${displayName},\n\nYour account was signed in to from a new device: ${device}, ${place}, at ${time}.\n\nIf it was you, there is nothing to do. If not, sign that session out and change your password:\n${link}\n",
    html: '<p>Hello ${displayName},</p><p>Your account was signed in to from a new device: ${device}, ${place}, at ${time}.</p><p>If it was you, there is nothing to do. If not, <a href="${link}">sign that session out</a> and change your password.</p>',
  },
  /** A browser (or app) on a system, e.g. "Chrome on macOS". */
  device: (browser: string, system: string) => `${browser} on ${system}`,
  unknownBrowser: "an unknown browser",
  unknownPlace: "an unknown place",
};

export type Devices = typeof devices;
