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

// Twilio Messages API: the credentials below are the only ones accepted; +15005550001 is refused as Twilio refuses
// its "invalid number" test number. Accepted messages are kept and listed at GET /__sent?to=<number>.
export const TWILIO = { sid: "ACtest", token: "twilio-token" };
const sentSms = [];

async function twilio(request, url) {
  if (url.pathname === "/__sent") {
    return Response.json(sentSms.filter((m) => m.To === url.searchParams.get("to")).reverse());
  }
  const expected = `Basic ${btoa(`${TWILIO.sid}:${TWILIO.token}`)}`;
  if (request.headers.get("authorization") !== expected) {
    return Response.json({ code: 20003, message: "Authenticate", status: 401 }, { status: 401 });
  }
  if (request.method !== "POST" || url.pathname !== `/2010-04-01/Accounts/${TWILIO.sid}/Messages.json`) {
    return Response.json({ code: 20404, message: "not found", status: 404 }, { status: 404 });
  }
  const form = Object.fromEntries(new URLSearchParams(await request.text()));
  if (form.To === "+15005550001") {
    return Response.json(
      { code: 21211, message: `The 'To' number ${form.To} is not a valid phone number.` },
      {
        status: 400,
      },
    );
  }
  sentSms.push(form);
  return Response.json(
    { sid: `SM${crypto.randomUUID().replace(/-/g, "")}`, status: "queued" },
    { status: 201 },
  );
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.hostname === "api.twilio.com") return twilio(request, url);
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
