/** The names and shape of mail templates, shared by the catalog files and the renderer (templates.ts). */

export const TEMPLATE_NAMES = [
  "email-verify",
  "signin-passwordless",
  "signin-otp",
  "reauthentication",
  "mfa-email",
  "user-invitation",
  "password-reset",
  "email-confirm-change",
  "org-invitation",
  "account-locked",
  "new-device",
  "impersonation-ended",
  "ciba-request",
  "setup-connection-ready",
] as const;

export type TemplateName = (typeof TEMPLATE_NAMES)[number];

export interface Template {
  subject: string;
  text: string;
  html: string;
}

export type LocaleTemplates = Partial<Record<TemplateName, Template>>;
export type Catalog = Record<string, LocaleTemplates>;
