import type { Devices } from "../en/devices";

export const devices: Devices = {
  mail: {
    subject: "New sign-in to your account",
    text: "Hello ${displayName},\n\nYour account was signed in to from a new device: ${device}, ${place}, at ${time}.\n\nIf it was you, there is nothing to do. If not, sign that session out and change your password:\n${link}\n",
    html: '<p>Hello ${displayName},</p><p>Your account was signed in to from a new device: ${device}, ${place}, at ${time}.</p><p>If it was you, there is nothing to do. If not, <a href="${link}">sign that session out</a> and change your password.</p>',
  },
};
