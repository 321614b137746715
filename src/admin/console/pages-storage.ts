import { html } from "hono/html";
import type { BucketRow, FileRow } from "../../db/schema";
import { action, type Chrome, frame, when } from "./pages";

/** Storage in the console: buckets with their settings, and the files of a bucket with previews. */

const size = (bytes: number) =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1_048_576
      ? `${(bytes / 1024).toFixed(1)} KB`
      : `${(bytes / 1_048_576).toFixed(1)} MB`;

const ruleText = (rule: BucketRow["rules"]["read"]) => (Array.isArray(rule) ? rule.join(", ") : rule);

export function bucketsPage(chrome: Chrome, buckets: (BucketRow & { files: number })[]) {
  return frame(
    chrome,
    html`<h1>Storage</h1>
<table><thead><tr><th>Bucket</th><th>Files</th><th>Max size</th><th>Upload</th><th>Read</th><th>Presigned URLs</th></tr></thead><tbody>${buckets.map(
      (bucket) =>
        html`<tr><td><a href="${chrome.base}/storage/${encodeURIComponent(bucket.id)}">${bucket.id}</a></td><td>${bucket.files}</td><td>${size(bucket.maxUploadFileSize)}</td><td>${ruleText(bucket.rules.upload)}</td><td>${ruleText(bucket.rules.read)}</td><td>${bucket.presignedUrlsEnabled ? "on" : "off"}</td></tr>`,
    )}</tbody></table>`,
  );
}

function ruleField(name: "upload" | "read" | "update" | "delete", rule: BucketRow["rules"]["read"]) {
  return html`<label>${name} <input name="rule-${name}" value="${ruleText(rule)}" aria-describedby="rule-hint"></label>`;
}

export function bucketPage(
  chrome: Chrome,
  input: {
    bucket: BucketRow;
    files: { file: FileRow; preview: string | null; uploader: string | null }[];
    /** Past the first page (a link back to the newest files); the next page's position, null at the end. */
    paged: boolean;
    next: string | null;
    error?: string;
  },
) {
  const { bucket } = input;
  const path = `/storage/${encodeURIComponent(bucket.id)}`;
  return frame(
    chrome,
    html`<p><a href="${chrome.base}/storage">← Storage</a></p>
<h1>Bucket ${bucket.id}</h1>
<h2>Files</h2>
${
  input.files.length === 0
    ? html`<p class="muted">No file.</p>`
    : html`<table><thead><tr><th>Preview</th><th>Name</th><th>Size</th><th>Type</th><th>Uploader</th><th>Created</th><th></th></tr></thead><tbody>${input.files.map(
        ({ file, preview, uploader }) =>
          html`<tr><td>${preview ? html`<img src="${preview}" alt="${file.name}" width="80" loading="lazy">` : "–"}</td><td>${file.name}</td><td>${size(file.size)}</td><td>${file.mimeType}</td><td>${
            file.uploadedByUserId
              ? html`<a href="${chrome.base}/users/${encodeURIComponent(file.uploadedByUserId)}">${uploader ?? file.uploadedByUserId.slice(0, 8)}</a>`
              : "–"
          }</td><td>${when(new Date(file.createdAt).toISOString())}</td><td>${action(
            chrome,
            `/storage/files/${encodeURIComponent(file.id)}/delete`,
            "Delete",
            "danger",
            html`<label><input type="checkbox" name="confirm" value="yes" required> sure </label>`,
          )}</td></tr>`,
      )}</tbody></table>`
}
<p>${input.paged ? html`<a href="?">← Newest</a>` : ""} ${
      input.next ? html`<a href="?after=${encodeURIComponent(input.next)}">Older →</a>` : ""
    }</p>
<h2>Settings</h2>
${input.error ? html`<p class="error" role="alert">${input.error}</p>` : ""}
<form method="post" action="${chrome.base}${path}/settings" class="edit">
  <input type="hidden" name="csrf" value="${chrome.csrf}">
  <label>Smallest upload (bytes) <input type="number" name="minUploadFileSize" min="0" value="${bucket.minUploadFileSize}"></label>
  <label>Largest upload (bytes) <input type="number" name="maxUploadFileSize" min="1" value="${bucket.maxUploadFileSize}"></label>
  <label>Allowed MIME types (comma-separated; empty: any) <input name="allowedMimeTypes" value="${bucket.allowedMimeTypes.join(", ")}"></label>
  <label>Cache-Control of downloads <input name="cacheControl" value="${bucket.cacheControl}"></label>
  <label class="check"><input type="checkbox" name="presignedUrlsEnabled" value="yes" ${bucket.presignedUrlsEnabled ? "checked" : ""}> Presigned URLs</label>
  <label>Presigned URL lifetime (seconds) <input type="number" name="downloadExpiration" min="1" value="${bucket.downloadExpiration}"></label>
  <fieldset><legend>Who may (public, authenticated, owner, or roles separated by commas)</legend>
  ${ruleField("upload", bucket.rules.upload)}${ruleField("read", bucket.rules.read)}${ruleField("update", bucket.rules.update)}${ruleField("delete", bucket.rules.delete)}
  <p id="rule-hint" class="muted">owner: the uploader; none: the admin only; roles: any of the caller's roles.</p></fieldset>
  <button class="primary" type="submit">Save settings</button>
</form>`,
  );
}
