import type { FileRow } from "../db/schema";

/**
 * How a file may be handed out: the `Cache-Control` value, and whether caches between the service and the client
 * may keep it (`shared`). Only an answer that is the same for everyone is shared: a file of a public bucket, or the
 * contents of a presigned URL (the URL is the credential, and the cache key). An answer that depended on the
 * caller's token is `private` and `Surrogate-Control: no-store`, so a CDN never serves one user's file to another.
 */
/** The record again, when the one in hand points at bytes R2 no longer has (download.ts `deliverFile`). */
export type Refresh = () => Promise<{ file: FileRow; delivery: Delivery }>;

export interface Delivery {
  cacheControl: string;
  shared: boolean;
}

/** `inline; filename="…"` with an ASCII fallback and the exact name as RFC 8187 `filename*` when needed. */
function contentDisposition(name: string, download: boolean): string {
  const kind = download ? "attachment" : "inline";
  const ascii = name.replace(/[^\x20-\x7e]/g, "_").replace(/["\\]/g, "_");
  if (ascii === name) return `${kind}; filename="${ascii}"`;
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/**
 * Headers every answer about the file carries (304 and 412 included). Every file answer is sandboxed, whatever its
 * type: an allow-list of "active" types missed `application/rss+xml`, `text/xsl` and every `+xml` type, which
 * browsers render as documents (stored XSS on the service's origin). Images and media still display.
 */
export function commonHeaders(file: FileRow, delivery: Delivery): Headers {
  return new Headers({
    "Cache-Control": delivery.shared ? delivery.cacheControl : `private, ${delivery.cacheControl}`,
    "Surrogate-Control": delivery.shared ? delivery.cacheControl : "no-store",
    ETag: file.etag,
    Date: new Date().toUTCString(),
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
  });
}

export function contentHeaders(headers: Headers, file: FileRow, url: URL): void {
  headers.set("Accept-Ranges", "bytes");
  headers.set("Surrogate-Key", file.id);
  headers.set("Last-Modified", new Date(file.updatedAt).toUTCString());
  headers.set("Content-Type", file.mimeType);
  headers.set(
    "Content-Disposition",
    contentDisposition(file.name, url.searchParams.get("download") === "true"),
  );
}

export const validatorsOf = (file: FileRow) => ({ etag: file.etag, lastModified: new Date(file.updatedAt) });
