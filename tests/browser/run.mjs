// Browser tests of the release build (dist/, from `trunk build --release`) in
// headless Chromium. Every test fails on a console error, a page error or a
// request that leaves the machine. Prints "N passed, M failed" last and exits
// non-zero on any failure.
//
//   node tests/browser/run.mjs            all tests
//   node tests/browser/run.mjs switch     only tests whose name contains "switch"
//
// Environment: OVERLAP_LAB_CLI (default target/release/overlap-lab),
// CHROMIUM (default /usr/bin/chromium), DIST (default dist).

import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve, launch, guard, ready, metric, afterRun, painted } from './harness.mjs';
import { registerShareTests } from './share.mjs';
import { registerWidgetTests } from './widget.mjs';
import { registerPageTests } from './page.mjs';
import { registerTimelineTests } from './timeline.mjs';
import { registerCoconetTests } from './coconet.mjs';
import { registerZeroBubbleTests } from './zb.mjs';
import { registerSurfaceTests } from './surface.mjs';
import { registerTourTests } from './tour.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DIST = resolve(ROOT, process.env.DIST ?? 'dist');
const CLI = resolve(ROOT, process.env.OVERLAP_LAB_CLI ?? 'target/release/overlap-lab');
const ARTIFACTS = join(ROOT, 'test-artifacts');
const TMP = mkdtempSync(join(tmpdir(), 'overlap-lab-test-'));
mkdirSync(ARTIFACTS, { recursive: true });

const tests = [];
const test = (name, fn, options = {}) => tests.push({ name, fn, options });

function assert(cond, message) {
  if (!cond) throw new Error(message);
}

/** The CLI's report for a scenario JSON text. */
function cliReport(json) {
  assert(existsSync(CLI), `${CLI} is missing: build it with \`cargo build --release\``);
  const file = join(TMP, `scenario-${process.hrtime.bigint()}.json`);
  writeFileSync(file, json);
  return JSON.parse(execFileSync(CLI, ['simulate', '--json', file], { encoding: 'utf8' }));
}

// Equal to a part in a billion, or both within 1e-12 of zero: the page's
// figures of a timeline run and the CLI's extrapolated ones may differ by
// rounding (crates/core/tests/steady_state.rs holds them to the same).
function close(a, b) {
  return a === b || Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b)) || Math.abs(a - b) <= 1e-12;
}

function at(obj, path) {
  return path.split('.').reduce((o, k) => (o == null ? undefined : o[k]), obj);
}

/** Every current figure on the page equals the CLI's for the page's own scenario JSON. */
async function matchesCli(page) {
  const json = await page.getAttribute('[data-scenario-json]', 'data-scenario-json');
  const report = cliReport(json);
  const figures = await page.$$eval('[data-metric][data-run="current"]', (els) =>
    els.map((e) => [e.dataset.metric, Number(e.dataset.value)]));
  assert(figures.length >= 20, `only ${figures.length} figures on the page`);
  for (const [name, value] of figures) {
    const expected = at(report, name);
    assert(typeof expected === 'number', `the CLI report has no ${name}`);
    assert(close(value, expected), `${name}: page shows ${value}, CLI says ${expected}`);
  }
  return report;
}

/** Fails when the canvas is (nearly) one colour. */
async function canvasDrawn(page) {
  const stats = await page.evaluate(() => {
    const c = document.querySelector('canvas');
    const ctx = c.getContext('2d');
    // The rows the clip box shows: the backing store may be taller.
    const rows = Math.min(c.height, Math.round(c.parentElement.clientHeight * devicePixelRatio));
    const { data } = ctx.getImageData(0, 0, c.width, rows);
    const bg = [data[0], data[1], data[2]];
    let differ = 0;
    const colours = new Set();
    const stride = 4 * 7; // every 7th pixel is plenty
    for (let i = 0; i < data.length; i += stride) {
      const d = Math.abs(data[i] - bg[0]) + Math.abs(data[i + 1] - bg[1]) + Math.abs(data[i + 2] - bg[2]);
      if (d > 30) differ++;
      colours.add((data[i] >> 4) * 256 + (data[i + 1] >> 4) * 16 + (data[i + 2] >> 4));
    }
    return { differ: differ / (data.length / stride), colours: colours.size, w: c.width, h: rows };
  });
  assert(stats.w > 0 && stats.h > 0, 'canvas has no size');
  assert(stats.differ > 0.03 && stats.colours >= 6,
    `canvas looks blank: ${(stats.differ * 100).toFixed(1)}% painted, ${stats.colours} colours`);
}

async function open(browser, server, options = {}) {
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1280, height: 900 },
    reducedMotion: options.reducedMotion ?? 'no-preference',
    colorScheme: options.colorScheme ?? 'light',
  });
  const page = await context.newPage();
  const problems = guard(page);
  await page.goto(server.url + (options.query ?? ''));
  await ready(page);
  return { page, problems, context };
}

// ---------------------------------------------------------------- the tests

test('loads, draws the timeline and matches the CLI', async ({ page }) => {
  await painted(page);
  await canvasDrawn(page);
  const step = await metric(page, 'step_time_ms');
  assert(step > 0, `step_time_ms is ${step}`);
  await matchesCli(page);
});

for (const axis of ['TP', 'PP', 'DP']) {
  test(`${axis} overlap switch changes step_time_ms as the CLI predicts`, async ({ page }) => {
    const sw = page.getByRole('switch', { name: `${axis} overlap` });
    assert((await sw.count()) === 1, `no single switch named "${axis} overlap"`);
    const before = await metric(page, 'step_time_ms');
    const was = await sw.isChecked();
    await afterRun(page, () => sw.click());
    assert((await sw.isChecked()) === !was, 'the switch did not flip');
    const report = await matchesCli(page);
    const after = await metric(page, 'step_time_ms');
    assert(close(after, report.step_time_ms), `page ${after} vs CLI ${report.step_time_ms}`);
    assert(after !== before, `${axis} overlap did not change the step time (${before})`);
    // The ghost keeps the run before the change.
    const ghost = Number(await page.getAttribute('[data-metric="step_time_ms"][data-run="previous"]', 'data-value'));
    assert(close(ghost, before), `ghost shows ${ghost}, expected the previous ${before}`);
    await painted(page);
    await canvasDrawn(page);
  });
}

test('every preset loads, draws and matches the CLI', async ({ page }) => {
  const ids = await page.$$eval('#f-preset option', (os) => os.map((o) => o.value));
  assert(ids.length >= 5, `only ${ids.length} presets`);
  for (const id of ids) {
    if ((await page.inputValue('#f-preset')) === id) continue;
    await afterRun(page, () => page.selectOption('#f-preset', id));
    await painted(page);
    await canvasDrawn(page);
    const errors = await page.evaluate(() => document.body.dataset.errors);
    assert(errors === '0', `preset ${id} was refused`);
    await matchesCli(page);
    if (id === 'contention') {
      await page.screenshot({ path: join(ARTIFACTS, 'contention.png'), fullPage: true });
    }
  }
}, { timeout: 240000 });

test('an invalid value is explained next to its control and kept', async ({ page }) => {
  const tp = page.locator('#f-parallel-tp');
  await tp.fill('3');
  await page.waitForFunction(() => document.body.dataset.errors === '1');
  const message = await page.textContent('#f-parallel-tp-err');
  assert(/3/.test(message) && /valid/i.test(message), `no useful message next to TP: "${message}"`);
  assert((await tp.inputValue()) === '3', 'the typed value was not kept');
  assert((await tp.getAttribute('aria-invalid')) === 'true', 'TP is not marked invalid');
  await tp.fill('4');
  await page.waitForFunction(() => document.body.dataset.errors === '0');
  await page.locator('#f-workload-layers').fill('');
  const local = await page.locator('.field:has(#f-workload-layers) .field-error').first().textContent();
  assert(/not a number|whole/i.test(local), `no message for a non-number: "${local}"`);
  // Digits past what a whole-number field holds are quoted as typed, not clamped.
  const layers = page.locator('#f-workload-layers');
  await layers.fill('99999999999999999999');
  await page.waitForFunction(() => /99999999999999999999 is out of range: valid is 1 to 4096/
    .test(document.querySelector('.field:has(#f-workload-layers) .field-error').textContent), null, { timeout: 5000 })
    .catch(async () => {
      throw new Error(`huge layers: "${await page.locator('.field:has(#f-workload-layers) .field-error').first().textContent()}"`);
    });
  assert((await layers.inputValue()) === '99999999999999999999', 'the typed value was not kept');
});

test('pasted scenario JSON: a refused value names its field and what is valid, keeps the text; a good one runs as the CLI does', async ({ page }) => {
  await page.locator('details.scenario-json > summary').click();
  const box = page.locator('#json-edit');
  const before = await page.getAttribute('[data-scenario-json]', 'data-scenario-json');
  const bad = '{"parallel":{"tp":8,"pp":2,"dp":1},"workload":{"layers":"eight"}}';
  await box.fill(bad);
  await page.getByRole('button', { name: 'Apply JSON' }).click();
  const alert = await page.textContent('.scenario-json [role="alert"]');
  assert(/workload\.layers/.test(alert) && /"eight" is not a whole number: valid is 1 to 4096/.test(alert),
    `the refusal does not name the field and its range: ${alert}`);
  assert(!/expected u32|invalid type/.test(alert), `the refusal speaks the parser's words: ${alert}`);
  assert((await box.inputValue()) === bad, 'the pasted text was not kept');
  assert((await page.getAttribute('[data-scenario-json]', 'data-scenario-json')) === before, 'a refused paste changed the scenario');
  const good = '{"hardware":{"preset":"dgx-a100","nodes":2},"parallel":{"tp":8,"pp":2,"dp":1},"workload":{"layers":12}}';
  await afterRun(page, async () => {
    await box.fill(good);
    await page.getByRole('button', { name: 'Apply JSON' }).click();
  });
  assert((await page.locator('.scenario-json [role="alert"]').count()) === 0, 'the refusal stayed after a good paste');
  const applied = JSON.parse(await page.getAttribute('[data-scenario-json]', 'data-scenario-json'));
  assert(applied.parallel.tp === 8 && applied.workload.layers === 12, `the pasted scenario was not applied: ${JSON.stringify(applied)}`);
  const report = await matchesCli(page);
  assert(close(report.step_time_ms, cliReport(good).step_time_ms), 'the page does not run the pasted scenario as the CLI runs it');
});

test('SM tax left empty says "none", and emptying it again brings back the modelled interference', async ({ page }) => {
  const box = page.locator('#f-sm-tax');
  const slider = page.locator('input[aria-label="SM tax (slider)"]');
  const scenario = async () => JSON.parse(await page.getAttribute('[data-scenario-json]', 'data-scenario-json'));
  const unset = () => slider.evaluate((el) => el.classList.contains('unset'));
  assert((await box.inputValue()) === '' && (await box.getAttribute('placeholder')) === 'none',
    'an unset SM tax does not say "none"');
  assert((await slider.inputValue()) === (await slider.getAttribute('min')) && await unset(),
    `an unset SM tax's slider is not dimmed at its low end: ${await slider.inputValue()}`);
  const modelled = await metric(page, 'step_time_ms');
  await afterRun(page, () => box.fill('0.5'));
  assert((await scenario()).sm_tax === 0.5 && !(await unset()), 'SM tax 0.5 did not reach the scenario');
  const taxed = await metric(page, 'step_time_ms');
  assert(taxed !== modelled, `SM tax 0.5 changed nothing: ${taxed} ms`);
  await matchesCli(page);
  await afterRun(page, () => box.fill(''));
  assert(!('sm_tax' in await scenario()), 'emptying SM tax left it in the scenario');
  assert((await page.evaluate(() => document.body.dataset.errors)) === '0', 'emptying SM tax was refused');
  assert((await page.locator('.field:has(#f-sm-tax) .field-error').first().textContent()) === '',
    'emptying SM tax put up a message');
  assert(close(await metric(page, 'step_time_ms'), modelled), 'emptying SM tax did not bring back the modelled figures');
  assert(await unset(), 'the emptied SM tax slider is not dimmed');
});

test('slider and number field stay paired; cluster changes keep tp x pp x dp consistent', async ({ page }) => {
  await afterRun(page, () => page.locator('input[aria-label="TP chunks (slider)"]').fill('8'));
  assert((await page.inputValue('#f-overlap-tp-chunks')) === '8', 'the number field did not follow the slider');
  let json = JSON.parse(await page.getAttribute('[data-scenario-json]', 'data-scenario-json'));
  assert(json.overlap.tp_chunks === 8, 'the slider did not reach the scenario');
  await afterRun(page, () => page.locator('#f-overlap-tp-chunks').fill('2'));
  assert((await page.inputValue('input[aria-label="TP chunks (slider)"]')) === '2', 'the slider did not follow the number field');
  for (const hw of ['dgx2-v100', 'dgx-h100', 'dgx-a100']) {
    await afterRun(page, () => page.selectOption('#f-hardware-preset', hw));
    assert((await page.evaluate(() => document.body.dataset.errors)) === '0', `hardware ${hw} was refused`);
    await matchesCli(page);
  }
  await afterRun(page, () => page.locator('#f-hardware-nodes').fill('4'));
  json = JSON.parse(await page.getAttribute('[data-scenario-json]', 'data-scenario-json'));
  assert(json.parallel.dp === 4, `DP was not re-derived for 4 nodes: ${JSON.stringify(json.parallel)}`);
  await afterRun(page, () => page.selectOption('#f-workload-kind', 'matmul_allreduce'));
  assert((await page.evaluate(() => document.body.dataset.errors)) === '0', 'the micro-benchmark was refused');
  await page.waitForSelector('#f-workload-m');
  await matchesCli(page);
  await afterRun(page, () => page.selectOption('#f-workload-kind', 'transformer'));
  await matchesCli(page);
  await painted(page);
  await canvasDrawn(page);
});

test('keyboard focus reaches every control', async ({ page }) => {
  const controls = await page.$$eval(
    'input, select, button, textarea, summary, canvas[tabindex], [tabindex="0"]',
    (els) => els
      .filter((e) => e.checkVisibility() && !e.disabled)
      .map((e, i) => { e.dataset.tabProbe = String(i); return String(i); }),
  );
  const seen = new Set();
  await page.locator('body').focus();
  for (let k = 0; k < controls.length + 30 && seen.size < controls.length; k++) {
    await page.keyboard.press('Tab');
    const id = await page.evaluate(() => document.activeElement?.dataset?.tabProbe ?? null);
    if (id !== null) seen.add(id);
  }
  const missed = controls.filter((c) => !seen.has(c));
  if (missed.length) {
    const names = await page.$$eval('[data-tab-probe]', (els, m) =>
      els.filter((e) => m.includes(e.dataset.tabProbe)).map((e) => e.outerHTML.slice(0, 80)), missed);
    throw new Error(`Tab never reached ${missed.length} controls: ${names.join(' | ')}`);
  }
});

test('the guided tour can be walked to its end', async ({ page }) => {
  await page.getByRole('button', { name: 'Start the guided tour' }).click();
  // To the last chapter, however many the tour has (the page says "of N").
  for (let chapter = 1; ; chapter++) {
    assert(chapter <= 50, 'the tour never offered to finish');
    await page.waitForSelector('.tour .predict button');
    await afterRun(page, () => page.locator('.tour .predict button').first().click());
    const reveal = await page.textContent('.tour .reveal');
    assert(/before: \d/.test(reveal), `chapter ${chapter} revealed nothing: ${reveal}`);
    const next = page.getByRole('button', { name: /Next chapter|Finish the tour/ });
    const finish = /Finish/.test(await next.textContent());
    await next.click();
    if (finish) break;
  }
  await page.waitForSelector('.tour-done');
  assert(/Tour complete/.test(await page.textContent('.tour')), 'the tour did not say it is complete');
});

test('playback: Space plays and pauses, the playhead sweeps', async ({ page }) => {
  await painted(page);
  await page.locator('canvas').focus();
  const frames0 = Number(await page.getAttribute('canvas', 'data-frames'));
  await page.keyboard.press('Space');
  await page.waitForSelector('button.play[aria-pressed="true"]');
  await page.waitForTimeout(400);
  await page.keyboard.press('Space');
  await page.waitForSelector('button.play[aria-pressed="false"]');
  const frames1 = Number(await page.getAttribute('canvas', 'data-frames'));
  assert(frames1 > frames0 + 5, `only ${frames1 - frames0} frames painted while playing`);
  const head = Number(await page.inputValue('input[aria-label="Playhead"]'));
  assert(head > 0 && head < 1000, `playhead at ${head}/1000 after a short play`);
  await page.getByRole('button', { name: 'Step forward' }).click();
  const head2 = Number(await page.inputValue('input[aria-label="Playhead"]'));
  assert(head2 >= head, 'step did not move the playhead forward');
  await canvasDrawn(page);
});

test('hover shows what a bar is; wheel and keys zoom', async ({ page }) => {
  await painted(page);
  const box = await page.locator('canvas').boundingBox();
  let found = false;
  for (let y = 40; y < 200 && !found; y += 4) {
    await page.mouse.move(box.x + box.width * 0.35, box.y + y);
    found = (await page.locator('.tooltip').count()) > 0;
  }
  assert(found, 'no tooltip over the compute lanes');
  const tip = await page.textContent('.tooltip');
  assert(/duration/.test(tip) && /start/.test(tip), `tooltip lacks start/duration: ${tip}`);
  await page.mouse.wheel(0, -400);
  await page.locator('canvas').focus();
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('0');
  await canvasDrawn(page);
});

test('reduced motion shows the final state at once', async ({ page }) => {
  await painted(page);
  const head = Number(await page.inputValue('input[aria-label="Playhead"]'));
  assert(head === 1000, `playhead at ${head}, expected the end`);
  await afterRun(page, () => page.getByRole('switch', { name: 'DP overlap' }).click());
  await painted(page);
  await canvasDrawn(page);
}, { reducedMotion: 'reduce' });

test('the table view lists the operations', async ({ page }) => {
  await page.locator('summary', { hasText: 'Timeline as a table' }).click();
  await page.waitForSelector('.table-view tbody tr');
  const rows = await page.locator('.table-view tbody tr').count();
  assert(rows > 10, `only ${rows} rows`);
});

test('a 375-pixel phone gets a usable layout', async ({ page }) => {
  await painted(page);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert(overflow <= 1, `the page scrolls sideways by ${overflow}px`);
  await canvasDrawn(page);
  await page.screenshot({ path: join(ARTIFACTS, 'phone-375.png'), fullPage: false });
}, { viewport: { width: 375, height: 800 } });

test('dark mode follows prefers-color-scheme', async ({ page }) => {
  await painted(page);
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert(bg !== 'rgb(255, 255, 255)', `dark mode kept a white page (${bg})`);
  await canvasDrawn(page);
  await page.screenshot({ path: join(ARTIFACTS, 'dark.png'), fullPage: false });
}, { colorScheme: 'dark' });

test('the 1T-parameter preset loads and draws', async ({ page }) => {
  await afterRun(page, () => page.selectOption('#f-preset', 'megatron-1t'));
  await painted(page);
  await canvasDrawn(page);
  await page.screenshot({ path: join(ARTIFACTS, 'megatron-1t.png'), fullPage: false });
}, { timeout: 120000 });

test('default view screenshot', async ({ page }) => {
  await painted(page);
  await page.screenshot({ path: join(ARTIFACTS, 'default.png'), fullPage: true });
});

// Share links, embedding, export, CSP (issue 5): tests/browser/share.mjs.
registerShareTests(test, {
  assert, close, canvasDrawn, cliReport, matchesCli, CLI, TMP, ARTIFACTS, DIST, serverUrl: () => server.url,
});
registerWidgetTests(test, { assert, close, cliReport, ARTIFACTS, DIST, serverUrl: () => server.url });

(await import('./kineto.mjs')).registerKinetoTests(test, { assert, CLI, TMP });

(await import('./import.mjs')).registerImportTests(test, { assert, CLI, TMP, ARTIFACTS });
(await import('./measured_zoom.mjs')).registerMeasuredZoomTests(test, { assert, CLI, ARTIFACTS });
// The simulation worker: large scenarios, failing runs, exports at any size (issues 14 and 8).
registerPageTests(test, { assert, close, canvasDrawn, matchesCli, ARTIFACTS });
// CoCoNet's tour chapter: slicing and fusion (issue 16).
registerCoconetTests(test, { assert, close, cliReport, matchesCli });
// Scale and memory: 1T driven as an engineer would, the memory bar (issues 14 and 10).
(await import('./scale.mjs')).registerScaleTests(test, { assert, close, canvasDrawn, matchesCli, cliReport, ARTIFACTS });
// Sharded data parallelism, distributed optimizer and FSDP (issue 10).
(await import('./sharding.mjs')).registerShardingTests(test, {
  assert, canvasDrawn, matchesCli, serverUrl: () => server.url,
});
registerZeroBubbleTests(test, { assert, close, cliReport, canvasDrawn, matchesCli, ARTIFACTS });
// Embed, theme, touch, phone, keyboard, slide exports and the table view (issue 12).
registerSurfaceTests(test, { assert, close, canvasDrawn, ARTIFACTS });
// The guided tour, before and after, reset to preset (issue 12): tests/browser/tour.mjs.
registerTourTests(test, { assert, matchesCli, ARTIFACTS });
// Stale figures and why the step moved (issue 46): tests/browser/stale.mjs.
(await import('./stale.mjs')).registerStaleTests(test, { assert, ARTIFACTS });
// The timeline's drawing: hover marks over the canvas (issue 14).
registerTimelineTests(test, { assert, canvasDrawn });

// The two operation limits: figures beyond the timeline's limit (issue 14).
(await import('./limits.mjs')).registerLimitTests(test, { assert, matchesCli, ARTIFACTS });
// The link-lane picker of a step without a timeline (issue 14).
(await import('./page4.mjs')).registerLinkPickerTests(test, { assert });

// Sweeps and bus bandwidth against message size (issue 43).
(await import('./sweep.mjs')).registerSweepTests(test, { assert, close, CLI, ARTIFACTS });
// The layout search's view (issue 59).
(await import('./search.mjs')).registerSearchTests(test, { assert, close, CLI, ARTIFACTS });
// Expert and context parallelism on the page and in embeds (issues 41 and 42).
(await import('./axes.mjs')).registerAxisTests(test, {
  assert, cliReport, matchesCli, serverUrl: () => server.url, ARTIFACTS,
});
// The page explains what it shows: sentences, keyboard, names, CORS (issue 58).
(await import('./explain.mjs')).registerExplainTests(test, {
  assert, serverUrl: () => server.url, ARTIFACTS, DIST,
});

// ---------------------------------------------------------------- runner

const filter = process.argv[2];
const server = await serve(DIST);
const browser = await launch();
let passed = 0;
let failed = 0;
for (const t of tests) {
  if (filter && !t.name.includes(filter)) continue;
  const started = Date.now();
  let session;
  try {
    session = await open(browser, server, t.options);
    session.page.setDefaultTimeout(t.options.timeout ?? 30000);
    await t.fn(session);
    // Let a late console error surface before judging the page clean.
    await session.page.waitForTimeout(100);
    if (session.problems.length) throw new Error(session.problems.join('\n'));
    passed++;
    console.log(`ok   ${t.name} (${Date.now() - started} ms)`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${t.name}\n     ${String(err.message ?? err).split('\n').join('\n     ')}`);
    if (session) {
      await session.page.screenshot({ path: join(ARTIFACTS, `failed-${t.name.replace(/\W+/g, '-')}.png`) }).catch(() => {});
    }
  } finally {
    await session?.context.close().catch(() => {});
  }
}
await browser.close();
await server.close();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
