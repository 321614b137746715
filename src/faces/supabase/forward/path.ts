/**
 * Where a forwarded call goes upstream (contract supabase.md §4): the same path, and only that. The path is decoded
 * segment by segment and written again from what was decoded, so the upstream reads exactly the path checked here. A
 * segment that decodes to a `/` or `\` (`%2F`, `%5C`), to `.` or `..`, or to a control character could, once the
 * upstream or a proxy before it decodes it, climb out of `rest/v1` into another API of the project (its `auth/v1`
 * admin routes, say), where the exchanged token would be a key to a door it was not given for: refused.
 */

/** The data APIs forwarded: PostgREST, pg_graphql, Edge Functions, Realtime (its socket and its REST broadcast). */
export const FORWARDED = /^\/(rest\/v1(\/.*)?|graphql\/v1|functions\/v1\/.+|realtime\/v1\/.+)$/;

/** What a path segment may hold as it is (RFC 3986 §3.3 `pchar`, less `%`): everything else is percent-encoded. */
const encodeSegment = (segment: string) =>
  encodeURIComponent(segment).replace(/%(2[146-9ABC]|3[ABD]|40)/gi, (kept) => decodeURIComponent(kept));

/**
 * The upstream path for `rawPath` (as the request line spelt it, after `/supabase`), or null when a segment is one of
 * those refused above, or the path is not one of the forwarded APIs once decoded.
 */
export function upstreamPath(rawPath: string): string | null {
  const segments = rawPath.split("/").slice(1);
  const decoded: string[] = [];
  for (const segment of segments) {
    let text: string;
    try {
      text = decodeURIComponent(segment);
    } catch {
      return null;
    }
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
    if (/[/\\\u0000-\u001f\u007f]/.test(text) || text === "." || text === "..") return null;
    decoded.push(text);
  }
  const path = `/${decoded.map(encodeSegment).join("/")}`;
  return FORWARDED.test(path) ? path : null;
}
