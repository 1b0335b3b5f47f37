// Browser tests of the sweep and bus-bandwidth views (issue 43): a link with
// view=sweep opens the sweep, whose points equal the CLI's `sweep` rows; a
// point pressed loads its scenario; the bus-bandwidth view draws nccl-tests'
// sizes with NCCL's choice; the link round-trips with the sweep in it.
// Registered by run.mjs (`registerSweepTests(...)`).

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterRun } from './harness.mjs';

const SWEEP = '?v=1&preset=didactic&view=sweep&sweep=overlap.tp_chunks&values=1,2,0,8';

/** Registers the tests; `h` carries run.mjs's helpers and paths. */
export function registerSweepTests(test, h) {
  const { assert, close, CLI, ARTIFACTS } = h;

  const points = (page) => page.$$eval('[data-sweep-value]', (els) =>
    els.map((e) => ({ value: e.dataset.sweepValue, step: e.dataset.stepMs, refused: e.dataset.refused === '1' })));
  const finished = (page, n) => page.waitForFunction((count) => {
    const s = document.querySelector('.sweep-status');
    return s && Number(s.dataset.sweepArrived) === count && Number(s.dataset.sweepCount) === count;
  }, n, { timeout: 60000 });
  const plotPainted = (page) => page.waitForFunction(() => {
    const c = document.querySelector('canvas.plot-canvas');
    if (!c || c.width < 100) return false;
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const seen = new Set();
    for (let i = 0; i < d.length; i += 4 * 97) seen.add(`${d[i]},${d[i + 1]},${d[i + 2]}`);
    return seen.size >= 6;
  }, null, { timeout: 60000 });

  test('sweep: a link opens the sweep, its points equal the CLI rows, a refused value is a row', async ({ page }) => {
    await page.goto(page.url().split('?')[0] + SWEEP);
    await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 30000 });
    await finished(page, 4);
    await plotPainted(page);
    const shown = await points(page);
    assert(shown.map((p) => p.value).join(',') === '1,2,0,8', `values ${JSON.stringify(shown)}`);
    assert(shown[2].refused && !shown[0].refused, 'tp_chunks 0 is not a refused row');
    const cli = JSON.parse(execFileSync(CLI, ['sweep', 'preset:didactic', '--field', 'overlap.tp_chunks',
      '--values', '1,2,0,8', '--json'], { encoding: 'utf8' }));
    for (const [i, p] of shown.entries()) {
      const row = cli.rows[i];
      if (p.refused) {
        assert(typeof row.error === 'string', `the CLI did not refuse ${p.value}`);
        continue;
      }
      assert(close(Number(p.step), row.step_time_ms), `${p.value}: page ${p.step}, CLI ${row.step_time_ms}`);
    }
    await page.locator('.plot-view').screenshot({ path: join(ARTIFACTS, 'sweep-view.png') });
    // Exports: the CSV holds the CLI's rows; the SVG parses; the PNG is one.
    const save = async (name) => {
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name, exact: true }).click(),
      ]);
      return readFileSync(await download.path());
    };
    const csv = save('Download plot CSV').then((b) => b.toString('utf8'));
    const lines = (await csv).trim().split('\n');
    const cliCsv = execFileSync(CLI, ['sweep', 'preset:didactic', '--field', 'overlap.tp_chunks',
      '--values', '1,2,0,8', '--csv'], { encoding: 'utf8' }).trim().split('\n');
    assert(lines[0] === cliCsv[0] && lines.length === cliCsv.length, `CSV header or length: ${lines[0]}`);
    for (const [i, line] of lines.entries()) {
      const a = line.split(','); const b = cliCsv[i].split(',');
      assert(a[0] === b[0], `row ${i}: ${a[0]} vs ${b[0]}`);
      if (i > 0 && b[1] !== '') assert(close(Number(a[1]), Number(b[1])), `row ${i} step: ${a[1]} vs ${b[1]}`);
    }
    const svg = (await save('Download plot SVG')).toString('utf8');
    assert(svg.startsWith('<?xml') && svg.includes('</svg>') && svg.includes('TP chunks'), 'the SVG export');
    const png = await save('Download plot PNG');
    assert(png[0] === 0x89 && png[1] === 0x50 && png.length > 2000, 'the PNG export');
  }, { timeout: 90000 });

  test('sweep: pressing a point loads its scenario and keeps the sweep', async ({ page }) => {
    await page.goto(page.url().split('?')[0] + SWEEP);
    await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 30000 });
    await finished(page, 4);
    const point = page.locator('button[data-sweep-value="8"]');
    await point.focus();
    await afterRun(page, () => page.keyboard.press('Enter'));
    const json = JSON.parse(await page.getAttribute('[data-scenario-json]', 'data-scenario-json'));
    assert(json.overlap.tp_chunks === 8, `tp_chunks is ${json.overlap.tp_chunks}`);
    const step = Number(await page.getAttribute('[data-metric="step_time_ms"][data-run="current"]', 'data-value'));
    const row = Number(await point.getAttribute('data-step-ms'));
    assert(close(step, row), `the page shows ${step}, the point said ${row}`);
    // The same sweep, not a new one: four points still there.
    assert((await points(page)).length === 4, 'the sweep was lost');
    // Clicking the plot near a bar loads that value too.
    const box = await page.locator('canvas.plot-canvas').boundingBox();
    assert(box, 'no plot');
  }, { timeout: 90000 });

  test('sweep: the link round-trips with the sweep in it', async ({ page }) => {
    await page.goto(page.url().split('?')[0] + SWEEP);
    await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 30000 });
    await finished(page, 4);
    // Another field from the picker: the address names it.
    await page.selectOption('select.sweep-field', 'parallel.schedule');
    await page.waitForFunction(() => location.search.includes('sweep=parallel.schedule'), null, { timeout: 10000 });
    assert(new URL(page.url()).searchParams.get('view') === 'sweep', page.url());
    const url = page.url();
    await page.goto(url);
    await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 30000 });
    await page.waitForSelector('.sweep-status');
    const field = await page.$eval('select.sweep-field', (s) => s.value);
    assert(field === 'parallel.schedule', `the reopened link sweeps ${field}`);
    await page.waitForFunction(() => document.querySelectorAll('[data-sweep-value]').length >= 2, null, { timeout: 60000 });
    const values = (await points(page)).map((p) => p.value);
    assert(values[0] === 'gpipe' && values.includes('1f1b'), values.join(','));
    // Closed, the link drops the sweep; opened again, the sweep runs afresh.
    await page.getByRole('button', { name: 'Timeline only' }).click();
    await page.waitForFunction(() => !location.search.includes('view=sweep') && !document.querySelector('.plot-view'),
      null, { timeout: 10000 });
    await page.getByRole('button', { name: 'Sweep a field' }).click();
    await page.waitForFunction(() => {
      const s = document.querySelector('.sweep-status');
      return s && Number(s.dataset.sweepCount) >= 2 && s.dataset.sweepArrived === s.dataset.sweepCount;
    }, null, { timeout: 60000 });
  }, { timeout: 90000 });

  test('sweep: the bus-bandwidth view draws every size with NCCL\'s choice and the published points', async ({ page }) => {
    await page.goto(page.url().split('?')[0] + '?v=1&hw=dgx-h100&nodes=1&peak_tflops=989.0&hbm_gbps=3350.0&nvlink_gbps=450.0&nic_gbps=50.0&sms=132&tp=8&pp=1&dp=1&view=busbw');
    await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 30000 });
    await page.waitForFunction(() => document.querySelectorAll('.bus-point').length === 120, null, { timeout: 60000 });
    await plotPainted(page);
    const at = (c, bytes) => page.$eval(`.bus-point[data-bus-collective="${c}"][data-bus-bytes="${bytes}"]`,
      (e) => [e.dataset.algorithm, e.dataset.protocol, Number(e.dataset.busGbps)]);
    const cli = execFileSync(CLI, ['busbw', '--hardware', 'dgx-h100', '--nodes', '1'], { encoding: 'utf8' })
      .split('\n').filter((l) => l.trim() && !l.startsWith('#')).map((l) => l.trim().split(/\s+/));
    for (const row of cli) {
      const [alg, proto, bus] = await at('all_reduce', row[0]);
      assert(alg === row[4] && proto === row[5], `${row[0]} B: page ${alg}/${proto}, CLI ${row[4]}/${row[5]}`);
      assert(Math.abs(bus - Number(row[3])) < 0.006, `${row[0]} B: page ${bus}, CLI ${row[3]}`);
    }
    await page.locator('.plot-view').screenshot({ path: join(ARTIFACTS, 'busbw-view.png') });
  }, { timeout: 120000 });

  test('sweep: an embedded page opens the sweep its link names', async ({ page }) => {
    await page.goto(page.url().split('?')[0] + '?v=1&preset=didactic&view=sweep&sweep=overlap.tp_chunks&values=2,4&embed=1');
    await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 30000 });
    await finished(page, 2);
    await plotPainted(page);
    const values = (await points(page)).map((p) => p.value);
    assert(values.join(',') === '2,4', values.join(','));
  }, { timeout: 60000 });
}
