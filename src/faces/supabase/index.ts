/**
 * The Supabase face is mounted by the runtime (./feature.ts). The service binding (src/platform/) takes this face's
 * access tokens too, checked here, by the face's own rules.
 */
export { verifySupabaseFaceToken } from "./gotrue";
