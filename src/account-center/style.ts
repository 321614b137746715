/**
 * The account center's CSS, after the built-in pages' house style (src/browser/render.ts): a wider column than the
 * sign-in card, sections as cards, lists that become stacked rows on a phone (390 px), and nothing that overflows:
 * long addresses, ids and German compounds wrap anywhere. Light and dark follow the house (`color-scheme`, Canvas,
 * `--accent`, `--line`). Constant text: never request data.
 */
export const ACCOUNT_STYLE = `
  body { place-items: start center; }
  main { width: min(52rem, 96vw); margin: 1.5rem 0; overflow-wrap: anywhere; }
  @media (max-width: 480px) { main { margin: 0; padding: 1rem .6rem; } }
  .account-header { display: flex; flex-wrap: wrap; justify-content: space-between; align-items: baseline; gap: .4rem 1rem; margin-bottom: .6rem; }
  .account-title { font-size: 1.4rem; font-weight: 700; margin: 0; }
  .account-who { display: flex; flex-wrap: wrap; gap: .3rem .8rem; align-items: baseline; font-size: .95rem; min-width: 0; }
  .account-who form { display: inline; }
  .account-nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: .3rem .9rem; padding: .6rem 0; margin: 0 0 1rem; border-bottom: 1px solid #8884; }
  .account-nav a { display: inline-block; padding: .2rem 0; }
  .account-back { margin: 0 0 1rem; }
  .notice { padding: .6rem .8rem; border-radius: 6px; background: #2e7d3222; border: 1px solid #2e7d3266; margin-bottom: 1rem; }
  section.card { border: 1px solid #8884; border-radius: 10px; padding: 1rem 1.2rem; margin: 0 0 1.2rem; scroll-margin-top: 1rem; }
  @media (max-width: 480px) { section.card { padding: .9rem .7rem; } }
  section.card h2 { font-size: 1.15rem; margin: 0 0 .6rem; }
  section.card .actions { margin-top: 1rem; justify-content: flex-start; }
  .muted { opacity: .8; font-size: .95rem; }
  .badge { display: inline-block; font-size: .8rem; padding: .1rem .45rem; border-radius: 999px; border: 1px solid var(--line); margin-inline-start: .4rem; white-space: nowrap; }
  .badge.ok { border-color: #2e7d3299; }
  .badge.warn { border-color: #e0a000aa; }
  .check { display: flex; gap: .5rem; align-items: center; margin-top: .8rem; font-weight: 400; }
  .check input { width: 1.1rem; height: 1.1rem; margin: 0; }
  .inline { display: inline; }
  .value { margin: .2rem 0 .6rem; }
  /* Fixed layout: columns share the width, so a long value (an IPv6 address, a nickname) breaks inside its column
     instead of pushing the table out of its card. */
  table.list { width: 100%; table-layout: fixed; border-collapse: collapse; margin: .4rem 0 .8rem; font-size: .95rem; }
  table.list th, table.list td { text-align: start; padding: .5rem .4rem; border-bottom: 1px solid #8883; vertical-align: top; }
  table.list th { font-weight: 600; }
  /* Words stay whole where they fit (anywhere would cut "Unbekannt" to "Unbe|kannt" in a narrow column); longer
     values still break. */
  table.list th, table.list td { overflow-wrap: break-word; hyphens: auto; }
  table.list td form { margin: 0; }
  table.list button { padding: .35rem .7rem; font-size: .9rem; }
  @media (max-width: 640px) {
    table.list thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
    table.list, table.list tbody, table.list tr, table.list td { display: block; width: 100%; box-sizing: border-box; }
    table.list tr { border: 1px solid #8884; border-radius: 8px; padding: .4rem .6rem; margin-bottom: .6rem; }
    table.list td { border: 0; padding: .25rem 0; display: grid; grid-template-columns: minmax(6.5rem, 35%) minmax(0, 1fr); gap: .6rem; overflow-wrap: anywhere; }
    table.list td::before { content: attr(data-label); font-weight: 600; }
    table.list td.row-action { display: block; }
    table.list td.row-action::before { content: none; }
  }
  section.danger { border-color: #d3303088; }
  button.danger { background: #b3261e; color: #fff; border-color: #b3261e; }
  @media (prefers-color-scheme: dark) {
    button.danger { background: #f2b8b5; color: #601410; border-color: #f2b8b5; }
  }
`;
