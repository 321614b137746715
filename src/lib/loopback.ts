/**
 * Host names that never leave this machine: `localhost` and its sub-names (RFC 6761 §6.3), 127.0.0.0/8 and `[::1]`.
 * A host as the URL parser writes it (lower case, IPv4 dotted, IPv6 bracketed); a final dot does not count.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/\.$/, "");
  return (
    host === "localhost" ||
    host.endsWith(".localhost") ||
    /^127\.\d+\.\d+\.\d+$/.test(host) ||
    host === "[::1]"
  );
}
