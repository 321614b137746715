/**
 * The notice of a sign-in from a device not seen before for the user (contract §13). Placeholders: `${displayName}`,
 * `${device}`, `${place}`, `${time}`, `${link}` (the account center, where a session is revoked).
 */
export const devices = {
  mail: {
    subject: "New sign-in to your account",
    text: "Hello ${displayName},\n\nYour account was signed in to from a new device: ${device}, ${place}, at ${time}.\n\nIf it was you, there is nothing to do. If not, sign that session out and change your password:\n${link}\n",
    html: '<p>Hello ${displayName},</p><p>Your account was signed in to from a new device: ${device}, ${place}, at ${time}.</p><p>If it was you, there is nothing to do. If not, <a href="${link}">sign that session out</a> and change your password.</p>',
  },
};

export type Devices = typeof devices;
