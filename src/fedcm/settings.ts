import { z } from "zod";
import type { FeatureSettingsSlice } from "../config";
import { bool, settingsSlice, url } from "../settings/kit";

/**
 * The relying-party side of FedCM (docs/fedcm.md): Google's One Tap through the browser's own prompt on the hosted
 * sign-in page. On by default wherever Google's ID-token sign-in can take the token (`AUTH_PROVIDER_GOOGLE_CLIENT_ID`
 * among `AUTH_PROVIDER_GOOGLE_AUDIENCE`); `AUTH_FEDCM_GOOGLE_ONE_TAP=false` keeps the page without it.
 * `AUTH_FEDCM_GOOGLE_CONFIG_URL` is Google's FedCM config file, moved only for a stand-in (the tests' fake Google).
 */
const vars = z.object({
  AUTH_FEDCM_GOOGLE_ONE_TAP: bool(true),
  AUTH_FEDCM_GOOGLE_CONFIG_URL: url.default("https://accounts.google.com/gsi/fedcm.json"),
});

const resolve = (data: z.output<typeof vars>) => ({
  fedcm: { googleOneTap: data.AUTH_FEDCM_GOOGLE_ONE_TAP, googleConfigUrl: data.AUTH_FEDCM_GOOGLE_CONFIG_URL },
});

export const fedcmSettings: FeatureSettingsSlice = settingsSlice(vars, resolve);

type FedcmSettings = ReturnType<typeof resolve>;
declare module "../config" {
  interface FeatureSettings extends FedcmSettings {}
}
