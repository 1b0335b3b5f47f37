#!/usr/bin/env node
// Page benchmark: figures printed, never asserted. Needs a release build in
// dist/ (`trunk build --release`). For the default preset and the 1T preset:
//   - control change to painted timeline, p50 and p95 (DP overlap switch toggled;
//     reduced motion, so "painted" is the final state, not the first morph frame);
//   - frame time during playback;
//   - time to first timeline (navigation start to the first painted timeline);
// and the gzipped wasm size.

import { readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve, launch, guard, ready, afterRun, painted } from '../tests/browser/harness.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = resolve(ROOT, process.env.DIST ?? 'dist');

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const f = (x) => x.toFixed(1);

async function firstTimeline(browser, url, preset, runs) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const page = await browser.newPage();
    await page.goto(url);
    await ready(page);
    times.push(Number(await page.evaluate(() => document.body.dataset.readyMs)));
    if (preset !== 'didactic') {
      // The 1T preset is reached by selecting it: time from the change to its timeline.
      const t = await page.evaluate(async (id) => {
        const sel = document.querySelector('#f-preset');
        const canvas = document.querySelector('canvas');
        const seq = Number(document.body.dataset.runSeq);
        const t0 = performance.now();
        const done = new Promise((res) => {
          const ob = new MutationObserver(() => {
            if (Number(canvas.dataset.paintedSeq) > seq) { ob.disconnect(); res(performance.now() - t0); }
          });
          ob.observe(canvas, { attributes: true, attributeFilter: ['data-painted-seq'] });
        });
        sel.value = id;
        sel.dispatchEvent(new Event('change', { bubbles: true }));
        return done;
      }, preset);
      times[times.length - 1] = t;
    }
    await page.close();
  }
  return times;
}

async function controlChange(page, n) {
  return page.evaluate(async (n) => {
    const sw = document.querySelector('#f-overlap-dp');
    const canvas = document.querySelector('canvas');
    const out = [];
    for (let i = 0; i < n; i++) {
      const seq = Number(document.body.dataset.runSeq);
      const t0 = performance.now();
      const done = new Promise((res) => {
        const ob = new MutationObserver(() => {
          if (Number(canvas.dataset.paintedSeq) > seq) { ob.disconnect(); res(performance.now() - t0); }
        });
        ob.observe(canvas, { attributes: true, attributeFilter: ['data-painted-seq'] });
      });
      sw.click();
      const total = await done;
      const runMs = Number(document.body.dataset.runMs);
      out.push([total, Number(document.body.dataset.simMs), runMs]);
      // A pause between changes, as a user's: changes arriving right after a
      // slow run are coalesced on purpose (src/runner.rs), which would add its
      // settle time to the next measurement.
      await new Promise((r) => setTimeout(r, 300));
    }
    return out;
  }, n);
}

async function playback(page, ms) {
  return page.evaluate(async (ms) => {
    const canvas = document.querySelector('canvas');
    const draws = [];
    const ob = new MutationObserver(() => draws.push(Number(canvas.dataset.drawMs)));
    ob.observe(canvas, { attributes: true, attributeFilter: ['data-draw-ms'] });
    const play = document.querySelector('button.play');
    play.click();
    const stamps = [];
    await new Promise((res) => {
      const t0 = performance.now();
      const tick = (t) => { stamps.push(t); if (t - t0 < ms) requestAnimationFrame(tick); else res(); };
      requestAnimationFrame(tick);
    });
    if (play.getAttribute('aria-pressed') === 'true') play.click();
    ob.disconnect();
    const gaps = stamps.slice(1).map((t, i) => t - stamps[i]);
    return { gaps, draws };
  }, ms);
}

const server = await serve(DIST);
const browser = await launch();
const wasm = readdirSync(DIST).find((n) => n.endsWith('.wasm'));
const raw = readFileSync(join(DIST, wasm));
console.log(`gzipped wasm: ${f(gzipSync(raw, { level: 9 }).length / 1024)} KB (${f(raw.length / 1024)} KB raw)`);

for (const preset of ['didactic', 'megatron-1t']) {
  console.log(`\n== ${preset}`);
  const first = await firstTimeline(browser, server.url, preset, preset === 'didactic' ? 5 : 3);
  const what = preset === 'didactic' ? 'navigation to first timeline' : 'preset selected to its first timeline';
  console.log(`time to first timeline (${what}): p50 ${f(pct(first, 50))} ms, max ${f(Math.max(...first))} ms`);

  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, reducedMotion: 'reduce' });
  const page = await context.newPage();
  const problems = guard(page);
  await page.goto(server.url);
  await ready(page);
  if (preset !== 'didactic') {
    await afterRun(page, () => page.selectOption('#f-preset', preset));
  }
  await painted(page);
  const pairs = await controlChange(page, preset === 'didactic' ? 30 : 10);
  const changes = pairs.map((p) => p[0]);
  const sims = pairs.map((p) => p[1]);
  const runs = pairs.map((p) => p[2]);
  console.log(`control change to painted timeline: p50 ${f(pct(changes, 50))} ms, p95 ${f(pct(changes, 95))} ms (n=${changes.length}); ` +
    `of which the core's resolve + simulate: p50 ${f(pct(sims, 50))} ms, the whole run with its first paint: p50 ${f(pct(runs, 50))} ms`);
  await context.close();

  const motion = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const p2 = await motion.newPage();
  guard(p2);
  await p2.goto(server.url);
  await ready(p2);
  if (preset !== 'didactic') {
    await afterRun(p2, () => p2.selectOption('#f-preset', preset));
  }
  await painted(p2);
  const { gaps, draws } = await playback(p2, 3000);
  const mean = gaps.reduce((a, b) => a + b, 0) / Math.max(1, gaps.length);
  console.log(`playback frame interval: mean ${f(mean)} ms (${f(1000 / mean)} fps), p95 ${f(pct(gaps, 95))} ms; ` +
    `draw per frame p50 ${f(pct(draws, 50))} ms, p95 ${f(pct(draws, 95))} ms`);
  await motion.close();
  if (problems.length) console.log(`page problems: ${problems.join('; ')}`);
}

await browser.close();
await server.close();
