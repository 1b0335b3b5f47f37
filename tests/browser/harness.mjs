// Shared by the browser tests and the page benchmark: a static server for
// dist/ on 127.0.0.1, headless Chromium through playwright-core, and a guard
// that records console errors, page errors and any request leaving the machine.

import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, extname, resolve, normalize } from 'node:path';
import { chromium } from 'playwright-core';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
};

/** Serves `root` on 127.0.0.1 at a free port; resolves to { url, close }. */
export async function serve(root) {
  const base = resolve(root);
  if (!existsSync(join(base, 'index.html'))) {
    throw new Error(`${base}/index.html is missing: run \`trunk build --release\` first`);
  }
  const server = createServer(async (req, res) => {
    try {
      const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      let file = normalize(join(base, path));
      if (!file.startsWith(base)) throw new Error('outside root');
      if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404);
      res.end('not found');
    }
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((ok) => server.close(ok)) };
}

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

/** Headless Chromium with the flags this project's machines need (toolchain.md).
 * Playwright gives every launch a fresh, empty user-data-dir of its own. */
export async function launch() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
}

/** Records what must never happen on a page: console errors, page errors, outside requests. */
export function guard(page) {
  const problems = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('request', (req) => {
    const url = new URL(req.url());
    const local = ['127.0.0.1', 'localhost'].includes(url.hostname);
    if (!local && !['data:', 'blob:', 'about:'].includes(url.protocol)) {
      problems.push(`request left the machine: ${req.url()}`);
    }
  });
  return problems;
}

/** Waits for the app to say it simulated and painted. */
export async function ready(page) {
  await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 30000 });
}

/** The current figure for a report field, as the raw number the page carries. */
export async function metric(page, name) {
  const v = await page.getAttribute(`[data-metric="${name}"][data-run="current"]`, 'data-value');
  return v === null ? NaN : Number(v);
}

export async function runSeq(page) {
  return Number(await page.evaluate(() => document.body.dataset.runSeq ?? '0'));
}

/**
 * What the page shows the moment `selector` first matches: `read`, a
 * function of that element run in the page (its source is sent, so it may
 * use only its argument and the page's globals). Start it before the action
 * that makes the element appear, and await it after.
 */
export function whenShown(page, selector, read) {
  return page.evaluate(`new Promise((resolve) => {
    const read = ${read};
    const look = () => {
      const el = document.querySelector(${JSON.stringify(selector)});
      if (!el) return false;
      resolve(read(el));
      return true;
    };
    if (look()) return;
    const ob = new MutationObserver(() => { if (look()) ob.disconnect(); });
    ob.observe(document.body, { childList: true, subtree: true, attributes: true });
  })`);
}

/** Runs `action`, then waits until the app has simulated once more. */
export async function afterRun(page, action) {
  const before = await runSeq(page);
  await action();
  await page.waitForFunction((n) => Number(document.body.dataset.runSeq ?? '0') > n, before, { timeout: 60000 });
}

/** Waits until the canvas shows the latest simulation in its final (post-morph) state. */
export async function painted(page) {
  await page.waitForFunction(() => {
    const c = document.querySelector('canvas');
    return c && c.dataset.paintedSeq === document.body.dataset.runSeq;
  }, null, { timeout: 60000 });
}
