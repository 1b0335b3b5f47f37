// Shared by the browser tests and the page benchmark: a static server for
// dist/ on 127.0.0.1, headless Chromium through playwright-core, and a guard
// that records console errors, page errors and any request leaving the machine.

import { chromium } from 'playwright-core';
// The same server scripts/serve.sh runs: what the tests open is what a person is served.
export { serve } from '../../scripts/static-server.mjs';

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
