import { authUrl, messageOf, nhost } from "./nhost.js";
import { pictureUrl, uploadPicture } from "./pictures.js";
import { returnFromAuth } from "./return-from-auth.js";

/**
 * The app: signed out, a link to the service's hosted sign-in and a sign-up form of its own; signed in, who the person
 * is, a link to their account center, a picture upload and sign-out. Every name a person reads is set with
 * textContent, never as HTML.
 */

const $ = (id) => document.getElementById(id);

/** Where the service sends the browser back after a sign-in or a mailed link: this page (on the allow-list). */
const BACK_HERE = `${location.origin}/`;

function showProblem(message) {
  $("problem").textContent = message ?? "";
  $("problem").hidden = !message;
}

function render(session) {
  $("signed-out").hidden = Boolean(session);
  $("signed-in").hidden = !session;
  if (!session) return;
  const { displayName, email } = session.user;
  $("who").textContent =
    email && displayName !== email ? `${displayName} (${email})` : (email ?? displayName);
}

/** Runs a form's or button's action with the control disabled, showing what went wrong. */
async function busy(control, action) {
  control.disabled = true;
  showProblem(null);
  try {
    await action();
  } catch (error) {
    showProblem(messageOf(error));
  } finally {
    control.disabled = false;
  }
}

function wire() {
  // The hosted pages (contract §13): the service signs the person in (password, passkey, providers…) in its own
  // branded, translated pages and comes back to BACK_HERE with a refresh token.
  $("sign-in").href = `${authUrl}/signin?redirectTo=${encodeURIComponent(BACK_HERE)}`;
  $("account").href = `${authUrl}/account`;

  $("sign-up").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const email = form.elements.email.value;
    busy(form.querySelector("button"), async () => {
      const { body } = await nhost.auth.signUpEmailPassword({
        email,
        password: form.elements.password.value,
        // The verification mail's link ends here, signed in (returnFromAuth).
        options: { redirectTo: BACK_HERE },
      });
      // With verification required (the default) there is no session yet; else nhost-js stored it.
      if (!body.session) {
        $("check-inbox").textContent = `Almost there: open the link we sent to ${email} to finish.`;
        $("check-inbox").hidden = false;
        form.reset();
      }
    });
  });

  $("upload").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const [file] = form.elements.file.files;
    if (!file) return;
    busy(form.querySelector("button"), async () => {
      const uploaded = await uploadPicture(file);
      $("uploaded").textContent = `Uploaded ${uploaded.name}.`;
      $("uploaded").hidden = false;
      const thumbnail = $("thumbnail");
      thumbnail.alt = uploaded.name;
      thumbnail.src = await pictureUrl(uploaded.id);
      thumbnail.hidden = false;
    });
  });

  $("sign-out").addEventListener("click", (event) => {
    busy(event.currentTarget, async () => {
      const session = nhost.getUserSession();
      $("thumbnail").hidden = true;
      $("uploaded").hidden = true;
      try {
        // Ends this session at the service: its refresh token stops working at once.
        if (session) await nhost.auth.signOut({ refreshToken: session.refreshToken });
      } finally {
        // Signed out here even when the service could not be reached (or had ended the session already).
        nhost.clearSession();
      }
    });
  });

  nhost.sessionStorage.onChange(render);
}

wire();
showProblem(await returnFromAuth());
render(nhost.getUserSession());
document.body.dataset.ready = "true";
