/** The Supabase face is mounted by the runtime (./feature.ts); nothing else uses it. */
export {};
