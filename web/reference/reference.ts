// Redoc's standalone bundle (UMD: React, MobX and styled-components inside), bundled again by esbuild into one file we serve ourselves.
import { init, type RedocRawOptions } from 'redoc/bundles/redoc.standalone.js';

/**
 * The reference page of one service: its OpenAPI document sits beside the page
 * (`<prefix>/docs` reads `<prefix>/openapi.json`), so the page is the same for
 * every service and works under any prefix.
 */
const options: RedocRawOptions = {
  // The download button links to the same document (same origin); nothing else leaves the page.
  hideDownloadButton: false,
  expandResponses: '200,201',
  jsonSampleExpandLevel: 2,
  pathInMiddlePanel: true,
  sortPropsAlphabetically: false,
  hideHostname: true,
  theme: {
    typography: { fontFamily: 'system-ui, sans-serif', headings: { fontFamily: 'system-ui, sans-serif' }, code: { fontFamily: 'ui-monospace, monospace' } },
  },
};

async function main(): Promise<void> {
  const root = document.getElementById('reference')!;
  const res = await fetch('openapi.json', { headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`openapi.json answered ${res.status}`);
  const spec = (await res.json()) as { info?: { title?: string } };
  document.title = `${spec.info?.title ?? 'API'} · API reference`;
  init(spec, options, root, (error) => {
    if (error) throw error;
    root.setAttribute('data-rendered', 'true');
  });
}

main().catch((err: unknown) => {
  const root = document.getElementById('reference')!;
  root.textContent = `The API reference could not be shown: ${err instanceof Error ? err.message : String(err)}`;
  root.setAttribute('data-error', 'true');
});
