// The live page: one HTML document with its style and script inline (lib/serve/assets/), so it needs
// nothing beyond the local server. The CSP nonce and the control token are set per response.
import { readFileSync } from 'node:fs';
import { packageFile } from '../package-files.ts';

const asset = (name: string): string => readFileSync(packageFile(`lib/serve/assets/${name}`), 'utf8');

let cached: { html: string; style: string; script: string } | undefined;

/** The page with this response's nonce and the server's token (empty when the page is read-only). */
export function renderPage(options: { nonce: string; token: string }): string {
  cached ??= { html: asset('page.html'), style: asset('page.css'), script: asset('page.js') };
  // Function replacers: `$` in the script or style must not be read as a replacement pattern.
  return cached.html
    .replace('{{STYLE}}', () => cached!.style)
    .replace('{{SCRIPT}}', () => cached!.script)
    .replaceAll('{{NONCE}}', () => options.nonce)
    .replace('{{TOKEN}}', () => options.token);
}
