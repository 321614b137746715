/**
 * The reference page's own script (served inline under the page's CSP nonce, `connect-src 'self'`): the search box
 * filters as you type (without script the same box submits `?q=` and the server filters), and each "try it" form
 * sends its request to this origin with `fetch` and shows the answer. Credentials typed into the page stay in the
 * page (never stored); requests carry no cookies.
 */
export const REFERENCE_SCRIPT = `
(() => {
  const search = document.getElementById("search");
  const filter = () => {
    const words = search.value.toLowerCase().split(/\\s+/).filter(Boolean);
    for (const op of document.querySelectorAll("details.operation")) {
      op.hidden = !words.every((word) => op.dataset.search.includes(word));
    }
    for (const section of document.querySelectorAll("section.tag")) {
      section.hidden = !section.querySelector("details.operation:not([hidden])");
    }
  };
  search.addEventListener("input", filter);
  document.getElementById("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    filter();
  });

  const base = new URL(".", location.href);
  const credential = (name) => document.getElementById(name).value.trim();

  async function send(form) {
    const output = form.querySelector("output");
    let path = form.dataset.path;
    const query = new URLSearchParams();
    const headers = new Headers();
    const authorization = credential("authorization");
    if (authorization) headers.set("authorization", /^(bearer|basic) /i.test(authorization) ? authorization : "Bearer " + authorization);
    const admin = credential("admin-secret");
    if (admin) headers.set("x-hasura-admin-secret", admin);
    let body;
    const type = form.dataset.type;
    const parts = new FormData();
    for (const input of form.querySelectorAll("input, textarea")) {
      const [where, name] = input.name.split(/:(.*)/s);
      if (where === "path") path = path.replace("{" + name + "}", encodeURIComponent(input.value));
      else if (where === "query" && input.value) query.set(name, input.value);
      else if (where === "header" && input.value) headers.set(name, input.value);
      else if (where === "part" && input.type === "file") for (const file of input.files) parts.append(name, file);
      else if (where === "part" && input.value) parts.append(name, input.value);
      else if (input.name === "body" && input.value.trim()) {
        body = input.value;
        headers.set("content-type", type);
      }
    }
    if (type === "multipart/form-data") body = parts;
    const url = new URL(path.replace(/^\\//, ""), base);
    url.search = query.toString();
    output.hidden = false;
    output.textContent = form.dataset.method + " " + url.pathname + url.search + " …";
    try {
      const response = await fetch(url, { method: form.dataset.method, headers, body, credentials: "omit", redirect: "manual" });
      if (response.type === "opaqueredirect") {
        output.textContent = "A redirect (3xx): a browser follows it. curl -i shows its Location.";
        return;
      }
      const contentType = response.headers.get("content-type") || "";
      let text;
      if (contentType.includes("json")) text = JSON.stringify(await response.json(), null, 2);
      else if (/^text\\//.test(contentType) || !contentType) text = await response.text();
      else text = "(" + (await response.arrayBuffer()).byteLength + " bytes of " + contentType + ")";
      output.textContent = response.status + " " + response.statusText + "  " + contentType + "\\n\\n" + text;
      output.dataset.status = String(response.status);
    } catch (error) {
      output.textContent = "The request failed: " + error.message;
    }
  }
  for (const form of document.querySelectorAll("form.try")) {
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      send(form);
    });
  }
})();
`;
