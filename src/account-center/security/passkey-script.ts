/**
 * The passkey step's script (served with the page's nonce, like src/pages/passkey-script.ts): a WebAuthn
 * registration with the creation options the server put on the button (`data-options`, made by the API's
 * `addSecurityKey` for this user), whose `credential.toJSON()` is then posted with the form to the account center,
 * which verifies it with the API's `verifyAddSecurityKey`. No request to anywhere: nothing to allow in `connect-src`.
 * Nothing of the request is interpolated; the script is constant text.
 */
export const PASSKEY_CREATE_SCRIPT = `
(() => {
  const button = document.getElementById("passkey-create");
  const form = document.getElementById("passkey-create-form");
  const problem = document.getElementById("passkey-create-problem");
  const unsupported = document.getElementById("passkey-unsupported");
  if (!button || !form || !window.PublicKeyCredential || !PublicKeyCredential.parseCreationOptionsFromJSON) return;
  unsupported.hidden = true;
  button.hidden = false;
  const create = async () => {
    problem.hidden = true;
    try {
      const options = PublicKeyCredential.parseCreationOptionsFromJSON(JSON.parse(button.dataset.options));
      const credential = await navigator.credentials.create({ publicKey: options });
      form.elements.credential.value = JSON.stringify(credential.toJSON());
      form.submit();
    } catch {
      problem.hidden = false;
    }
  };
  button.addEventListener("click", create);
  // Enter in the name field starts the ceremony rather than posting a form without a credential.
  form.addEventListener("submit", (event) => {
    if (form.elements.credential.value) return;
    event.preventDefault();
    create();
  });
})();`;
