/**
 * The security sections' CSS, appended after the house style and the frame's (src/account-center/style.ts) on every
 * account-center page. Constant text. Long values (a token, a secret key, a provider's user id, an organization's
 * name) wrap anywhere; the QR code keeps a white square in dark mode too, since scanners need the contrast. No `>`,
 * `<`, `&` or quotes: the page writes its style through `html`, which escapes them (a child combinator would arrive
 * as `&gt;` and drop its rule); security-forms.test.ts checks the page carries this text unchanged.
 */
export const SECURITY_STYLE = `
  .security-sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
  .security-state { margin: .2rem 0 .8rem; }
  .security-state strong { font-weight: 600; }
  .qr { display: block; width: min(14rem, 70vw); height: auto; margin: .8rem auto; border-radius: 4px; }
  .secret { font: 600 1rem/1.5 ui-monospace, monospace; letter-spacing: .06em; overflow-wrap: anywhere; word-break: break-all;
    padding: .5rem .7rem; border: 1px dashed var(--line); border-radius: 6px; user-select: all; }
  ul.recovery-codes { list-style: none; padding: 0; margin: .8rem 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(9rem, 1fr)); gap: .4rem; }
  ul.recovery-codes li { font: 600 1rem/1.6 ui-monospace, monospace; text-align: center; padding: .25rem; border: 1px solid var(--line); border-radius: 4px; }
  .token-value { display: block; width: 100%; box-sizing: border-box; font: 600 1rem/1.5 ui-monospace, monospace; padding: .6rem;
    border: 1px solid var(--line); border-radius: 6px; overflow-wrap: anywhere; resize: none; background: Canvas; color: CanvasText; }
  .security-form { margin-top: .8rem; }
  .security-form .row { align-items: flex-end; }
  .security-form .row div { flex: 1 1 12rem; }
  .security-form select { width: auto; min-width: 8rem; }
  table.list td.row-action button { white-space: nowrap; }
  .security-item-name { overflow-wrap: anywhere; }
  .security-actions { display: flex; gap: .5rem; flex-wrap: wrap; margin-top: .8rem; }
  .security-actions form { margin: 0; }
  .provider-links { display: flex; gap: .5rem; flex-wrap: wrap; margin-top: .8rem; }
  #passkey-create-problem, #passkey-unsupported { margin-top: .8rem; }
  ul.vault-apps { list-style: none; padding: 0; margin: 0; }
  ul.vault-apps li { overflow-wrap: anywhere; }
  .second-step-choices { border: 1px solid var(--line); border-radius: 6px; padding: .4rem .8rem .6rem; margin: 0 0 .8rem; }
  .second-step-choices legend { padding: 0 .3rem; }
  .second-step-choices .choice { display: flex; flex-wrap: wrap; align-items: center; gap: .2rem .5rem; margin: .45rem 0; }
  .second-step-choices .choice input { width: auto; margin: 0; }
  .second-step-choices .choice label { flex: 1 1 0; min-width: 0; margin: 0; font-weight: 400; overflow-wrap: anywhere; }
  .second-step-choices .choice .hint { flex-basis: 100%; margin: 0 0 0 1.6rem; }
`;
