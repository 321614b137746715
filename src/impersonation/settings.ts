import { z } from "zod";
import type { FeatureSettingsSlice } from "../config";
import { bool, list, settingsSlice } from "../settings/kit";

/** Impersonation (contract operators.md §1). */
const vars = z.object({
  /** Off by default: an operator acting as a user is a power a deployment turns on knowingly. */
  AUTH_IMPERSONATION_ENABLED: bool(false),
  /** Mail the user when an impersonation of them ended (in their language). */
  AUTH_IMPERSONATION_NOTIFY_USER: bool(true),
  /** Users holding one of these roles are impersonated only with `AUTH_IMPERSONATION_PRIVILEGED=true`. */
  AUTH_IMPERSONATION_PROTECTED_ROLES: list(["admin"]),
  /** Allows impersonating the protected roles and members of an organization with enforced SSO. */
  AUTH_IMPERSONATION_PRIVILEGED: bool(false),
});

const resolve = (data: z.output<typeof vars>) => ({
  impersonation: {
    enabled: data.AUTH_IMPERSONATION_ENABLED,
    notifyUser: data.AUTH_IMPERSONATION_NOTIFY_USER,
    protectedRoles: data.AUTH_IMPERSONATION_PROTECTED_ROLES,
    privileged: data.AUTH_IMPERSONATION_PRIVILEGED,
  },
});

export const impersonationSettings: FeatureSettingsSlice = settingsSlice(vars, resolve);

type ImpersonationSettings = ReturnType<typeof resolve>;
declare module "../config" {
  interface FeatureSettings extends ImpersonationSettings {}
}
