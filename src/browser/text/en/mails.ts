import type { LocaleTemplates } from "../../../mail/template-types";

/** The mails of contract §8 in English: every other language has each of them (test/i18n/catalogues.test.ts). */
export const mails = {
  "email-verify": {
    subject: "Verify your email",
    text: "Hello ${displayName},\n\nAn account was created with this email address. If it was you, use this link to verify the address:\n${link}\n\nIf you did not create it, do not follow the link: someone else chose this address and its password. Ignore this mail, and the account stays unusable.\n",
    html: '<p>Hello ${displayName},</p><p>An account was created with this email address. If it was you, <a href="${link}">verify your email address</a>.</p><p>If you did not create it, do not follow the link: someone else chose this address and its password. Ignore this mail, and the account stays unusable.</p>',
  },
  "signin-passwordless": {
    subject: "Your sign-in link",
    text: "Hello ${displayName},\n\nUse this link to sign in:\n${link}\n\nIt is valid for one hour.\n",
    html: '<p>Hello ${displayName},</p><p><a href="${link}">Sign in</a></p><p>The link is valid for one hour.</p>',
  },
  "signin-otp": {
    subject: "Your sign-in code",
    text: "Hello ${displayName},\n\nYour sign-in code is ${code}. It is valid for ten minutes.\n",
    html: "<p>Hello ${displayName},</p><p>Your sign-in code is <strong>${code}</strong>. It is valid for ten minutes.</p>",
  },
  reauthentication: {
    subject: "Confirm it is you",
    text: "Hello ${displayName},\n\nTo confirm it is you, enter this code: ${code}. It is valid for five minutes.\n\nIf you did not ask for it, someone may be using your account: change your password.\n",
    html: "<p>Hello ${displayName},</p><p>To confirm it is you, enter this code: <strong>${code}</strong>. It is valid for five minutes.</p><p>If you did not ask for it, someone may be using your account: change your password.</p>",
  },
  "mfa-email": {
    subject: "Your second-step code",
    text: "Hello ${displayName},\n\nA sign-in to your account is waiting for its second step. To finish it, enter this code: ${code}. It is valid for five minutes.\n\nIf it was not you, do not share the code with anyone and change your password.\n",
    html: "<p>Hello ${displayName},</p><p>A sign-in to your account is waiting for its second step. To finish it, enter this code: <strong>${code}</strong>. It is valid for five minutes.</p><p>If it was not you, do not share the code with anyone and change your password.</p>",
  },
  "user-invitation": {
    subject: "You are invited",
    text: "Hello,\n\nYou have been invited to create an account with ${email}. Follow this link to accept:\n${link}\n\nThe link is valid for one hour. If you did not expect this invitation, ignore this mail.\n",
    html: '<p>Hello,</p><p>You have been invited to create an account with ${email}. <a href="${link}">Accept the invitation</a>.</p><p>The link is valid for one hour. If you did not expect this invitation, ignore this mail.</p>',
  },
  "password-reset": {
    subject: "Reset your password",
    text: "Hello ${displayName},\n\nUse this link to reset your password:\n${link}\n\nIf you did not ask for this, ignore this mail.\n",
    html: '<p>Hello ${displayName},</p><p><a href="${link}">Reset your password</a></p><p>If you did not ask for this, ignore this mail.</p>',
  },
  "email-confirm-change": {
    subject: "Confirm your new email",
    text: "Hello ${displayName},\n\nUse this link to make ${newEmail} your email address:\n${link}\n",
    html: '<p>Hello ${displayName},</p><p><a href="${link}">Confirm ${newEmail} as your email address</a></p>',
  },
  "org-invitation": {
    subject: "You are invited to ${orgName}",
    text: "Hello,\n\n${inviterName} invited ${email} to join ${orgName} as ${role}. Sign in or sign up with this address, then accept:\n${link}\n\nThe invitation is valid for seven days. If you did not expect it, ignore this mail.\n",
    html: '<p>Hello,</p><p>${inviterName} invited ${email} to join <strong>${orgName}</strong> as ${role}. Sign in or sign up with this address, then <a href="${link}">accept the invitation</a>.</p><p>The invitation is valid for seven days. If you did not expect it, ignore this mail.</p>',
  },
} satisfies LocaleTemplates;

export type Mails = typeof mails;
