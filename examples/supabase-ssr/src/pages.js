import { html } from "hono/html";

export const STYLE = `body { font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; }
form { margin: 1rem 0; display: grid; gap: 0.5rem; max-width: 22rem; }
img { border-radius: 4px; margin-right: 0.5rem; }
.error { color: #a00; }
`;

/** The one layout: no script at all, so the page's CSP forbids every script. */
export function page(title, body) {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>${title} · Supabase face example</title>
        <link rel="stylesheet" href="/style.css" />
      </head>
      <body>
        <h1>${title}</h1>
        ${body}
      </body>
    </html>`;
}

export function signedOutPage(message) {
  return page(
    "Welcome",
    html`${message ? html`<p class="error" role="alert">${message}</p>` : ""}
      <h2>Sign in</h2>
      <form method="post" action="/signin">
        <label>Email <input name="email" type="email" autocomplete="username" required /></label>
        <label>Password <input name="password" type="password" autocomplete="current-password" required /></label>
        <button>Sign in</button>
      </form>
      <h2>Create an account</h2>
      <form method="post" action="/signup">
        <label>Email <input name="email" type="email" autocomplete="username" required /></label>
        <label>Password <input name="password" type="password" autocomplete="new-password" required /></label>
        <button>Create account</button>
      </form>`,
  );
}

export function homePage({ user, aal, factors, notes, notesError, pictures, message }) {
  const totp = factors.find((factor) => factor.factor_type === "totp" && factor.status === "verified");
  return page(
    "Your account",
    html`${message ? html`<p role="status">${message}</p>` : ""}
      <p>Signed in as <strong id="email">${user.email}</strong> (assurance <span id="aal">${aal}</span>).</p>
      <h2>Notes</h2>
      ${
        notesError
          ? html`<p class="error" id="notes-error">${notesError}</p>`
          : html`<ul id="notes">
              ${notes.map((note) => html`<li>${note.title}</li>`)}
            </ul>`
      }
      <h2>Pictures</h2>
      <div id="pictures">${pictures.map((p) => html`<img src="${p.url}" alt="${p.name}" width="120" />`)}</div>
      <form method="post" action="/pictures" enctype="multipart/form-data">
        <label>Picture <input name="picture" type="file" accept="image/*" required /></label>
        <button>Upload</button>
      </form>
      <h2>Two-step sign-in</h2>
      ${
        totp
          ? html`<p id="totp-on">An authenticator app is set up.</p>`
          : html`<form method="post" action="/totp/enroll"><button>Set up an authenticator app</button></form>`
      }
      <h2>Session</h2>
      <form method="post" action="/refresh"><button>Refresh the session</button></form>
      <form method="post" action="/signout"><button>Sign out</button></form>`,
  );
}

export function enrollPage({ factorId, qrCode, secret, message }) {
  return page(
    "Set up an authenticator app",
    html`${message ? html`<p class="error" role="alert">${message}</p>` : ""}
      <p>Scan the code with your authenticator app, or type the key <code id="secret">${secret}</code>.</p>
      <img alt="QR code" width="180" src="${qrCode}" />
      <form method="post" action="/totp/confirm">
        <input type="hidden" name="factorId" value="${factorId}" />
        <label>Code <input name="code" inputmode="numeric" autocomplete="one-time-code" required /></label>
        <button>Turn on</button>
      </form>`,
  );
}

export function secondFactorPage(message) {
  return page(
    "Your authenticator code",
    html`${message ? html`<p class="error" role="alert">${message}</p>` : ""}
      <form method="post" action="/mfa">
        <label>Code <input name="code" inputmode="numeric" autocomplete="one-time-code" required /></label>
        <button>Continue</button>
      </form>`,
  );
}

export function checkMailPage(email) {
  return page(
    "Check your mail",
    html`<p>We sent a link to <strong>${email}</strong>. Open it on this device to finish signing up.</p>`,
  );
}
