import type { Lockout } from "../en/lockout";

export const lockout: Lockout = {
  mail: {
    subject: "Your account was locked",
    text: "Hello ${displayName},\n\nThere were too many failed attempts to sign in to your account, so signing in with that method is paused for ${minutes} minutes. If it was you, use this link to unlock it now:\n${link}\n\nIf it was not you, someone may know your email address: choose a strong password.\n",
    html: '<p>Hello ${displayName},</p><p>There were too many failed attempts to sign in to your account, so signing in with that method is paused for ${minutes} minutes. If it was you, <a href="${link}">unlock it now</a>.</p><p>If it was not you, someone may know your email address: choose a strong password.</p>',
  },
};
