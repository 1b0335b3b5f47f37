// The one static server of the project: `scripts/serve.sh` serves the built
// site (dist/) with it, and the browser tests and the page benchmark serve the
// same dist/ through it (tests/browser/harness.mjs). It serves files as they
// are, with their types, and answers 404 for anything else: no fallback to
// index.html, so a missing file is never mistaken for the app, and no
// injected reload script, so the page's Content-Security-Policy holds.
// Every answer allows any origin to read it (Access-Control-Allow-Origin: *),
// as GitHub Pages does: a course page on another origin can then load the
// widget, its worker and its wasm from here while its author previews it
// (docs/course-authors.md). The site is public and takes no credentials,
// so there is nothing for another origin to read that it could not fetch.
//
//   node scripts/static-server.mjs DIR [PORT]   (PORT 8080 by default; 0 picks a free one)

import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, extname, resolve, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
};

/** Serves `root` on 127.0.0.1 at `port` (0: a free one); resolves to { url, close }. */
export async function serve(root, port = 0) {
  const base = resolve(root);
  if (!existsSync(join(base, 'index.html'))) {
    throw new Error(`${base}/index.html is missing: run scripts/build-site.sh first`);
  }
  const server = createServer(async (req, res) => {
    try {
      const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      let file = normalize(join(base, path));
      if (file !== base && !file.startsWith(base + sep)) throw new Error('outside root');
      if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
      const body = await readFile(file);
      res.writeHead(200, {
        'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
        // Served for trying out, not for caching: a rebuilt site is seen on reload.
        'cache-control': 'no-store',
        'access-control-allow-origin': '*',
      });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', 'access-control-allow-origin': '*' });
      res.end('not found');
    }
  });
  await new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', ok);
  });
  const { port: bound } = server.address();
  return { url: `http://127.0.0.1:${bound}/`, close: () => new Promise((ok) => server.close(ok)) };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [dir = 'dist', portText = '8080'] = process.argv.slice(2);
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`static-server: port must be a whole number from 0 to 65535, not "${portText}"`);
    process.exit(2);
  }
  try {
    const { url } = await serve(dir, port);
    console.log(`Overlap Lab: serving ${resolve(dir)} at ${url} (Ctrl-C stops)`);
  } catch (e) {
    console.error(`static-server: ${e.message}`);
    process.exit(2);
  }
}
