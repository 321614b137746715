// Binary fixtures imported through Vite's `?inline` (a base64 data URL): the workers pool has no file system.
declare module "*?inline" {
  const dataUrl: string;
  export default dataUrl;
}
