// Fake outside world for the tests, bound as OUTBOUND. It answers like the services it stands in for.
// Have I Been Pwned range API: GET <base>/range/<5 hex> → "SUFFIX:COUNT" lines, with padding lines ":0".
const BREACHED = ["password123", "correct horse battery"];

async function sha1(text) {
  const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("")
    .toUpperCase();
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.hostname === "hibp.test") {
      if (url.pathname.startsWith("/down/")) return new Response("unavailable", { status: 503 });
      const prefix = url.pathname.split("/").pop();
      const lines = ["0018A45C4D1DEF81644B54AB7F969B88D65:0"];
      for (const password of BREACHED) {
        const hash = await sha1(password);
        if (hash.startsWith(prefix)) lines.push(`${hash.slice(5)}:42`);
      }
      return new Response(lines.join("\r\n"));
    }
    return new Response("no fake for this host", { status: 502 });
  },
};
