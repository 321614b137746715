// Binary fixtures imported through Vite's `?inline` (a base64 data URL): the workers pool has no file system.
declare module "*?inline" {
  const dataUrl: string;
  export default dataUrl;
}

// Text files imported through Vite's `?raw` (their contents): the example's Cedar files in test/packages/hono/.
declare module "*?raw" {
  const text: string;
  export default text;
}
