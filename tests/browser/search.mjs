// Browser tests of the layout search view (issue 59): a link with
// view=search runs the core's search in a worker of its own, which
// simulates the candidates over a pool of helper workers; the best
// layouts and the counts equal `overlap-lab search --json`'s; a row pressed
// loads its scenario and keeps the search; the search can be cancelled; at
// 390x844 the controls and the list stay usable.
// Registered by run.mjs (`registerSearchTests(...)`).

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const SEARCH = '?v=1&preset=didactic&view=search';

/** Registers the tests; `h` carries run.mjs's helpers and paths. */
export function registerSearchTests(test, h) {
  const { assert, close, CLI, ARTIFACTS } = h;

  const shown = (page) => page.waitForFunction(() => document.body.dataset.search === 'shown',
    null, { timeout: 60000 });
  const rows = (page) => page.$$eval('[data-search-rank]', (els) =>
    els.map((e) => ({ rank: Number(e.dataset.searchRank), step: Number(e.dataset.stepMs),
      memory: Number(e.dataset.memoryGb), text: e.textContent })));
  const counts = (page) => page.$eval('.search-status', (e) => ({
    space: Number(e.dataset.searchSpace), simulated: Number(e.dataset.searchSimulated),
    pruned: Number(e.dataset.searchPruned), refused: Number(e.dataset.searchRefused) }));
  const cli = () => JSON.parse(execFileSync(CLI, ['search', 'preset:didactic', '--json'],
    { encoding: 'utf8' }));

  test('search: a link opens the search, its best layouts and counts equal the CLI\'s', async ({ page }) => {
    await page.goto(page.url().split('?')[0] + SEARCH);
    await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 30000 });
    await shown(page);
    const listed = await rows(page);
    const expected = cli();
    assert(listed.length === expected.best.length && listed.length > 1, `${listed.length} rows`);
    for (const [i, r] of listed.entries()) {
      const want = expected.best[i];
      assert(r.rank === want.rank, `row ${i}: rank ${r.rank}, CLI ${want.rank}`);
      assert(close(r.step, want.step_time_ms), `row ${i}: step ${r.step}, CLI ${want.step_time_ms}`);
      assert(r.text.includes(want.description), `row ${i}: ${r.text} lacks ${want.description}`);
    }
    const c = await counts(page);
    assert(c.space === expected.space && c.simulated === expected.simulated
      && c.pruned === expected.pruned && c.refused === expected.refused,
      `counts ${JSON.stringify(c)} against the CLI's ${expected.space}/${expected.simulated}/${expected.pruned}/${expected.refused}`);
    const winner = await page.textContent('.search-winner');
    assert(winner === expected.winner, `winner: ${winner}`);
    // The candidates were simulated over a pool: the search worker and one
    // helper per further core (at most eight workers), each of which answered.
    const workers = await page.$eval('.search-status', (e) => Number(e.dataset.searchWorkers));
    const cores = await page.evaluate(() => navigator.hardwareConcurrency || 1);
    assert(workers === Math.min(Math.max(cores, 1), 8), `${workers} workers on ${cores} cores`);
    const time = await page.textContent('.search-time');
    assert(time.includes(workers === 1 ? 'on one worker' : `over ${workers} workers`), `time: ${time}`);
    await page.locator('.plot-view').screenshot({ path: join(ARTIFACTS, 'search-view.png') });
    // The link keeps the search.
    assert(page.url().includes('view=search'), `the address lost the search: ${page.url()}`);
  }, { timeout: 120000, viewport: { width: 1440, height: 900 } });

  test('search: pressing a row loads its scenario and keeps the search', async ({ page }) => {
    await page.goto(page.url().split('?')[0] + SEARCH);
    await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 30000 });
    await shown(page);
    const [first] = await rows(page);
    await page.locator('[data-search-rank]').first().click();
    await page.waitForFunction((step) => {
      const e = document.querySelector('[data-metric="step_time_ms"][data-run="current"]');
      return e && Math.abs(Number(e.dataset.value) - step) <= 1e-9 * step;
    }, first.step, { timeout: 60000 });
    assert((await rows(page)).length > 1, 'the search is gone after loading a row');
    assert(await page.evaluate(() => document.body.dataset.search) === 'shown', 'the search ran again');
  }, { timeout: 120000 });

  test('search: cancelled while it runs, and usable at 390x844', async ({ page }) => {
    await page.goto(page.url().split('?')[0] + SEARCH + '&objective=both');
    await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 30000 });
    const cancel = page.locator('.search-cancel');
    await cancel.waitFor({ timeout: 30000 });
    await cancel.click();
    await page.waitForFunction(() => document.body.dataset.search === 'cancelled', null, { timeout: 10000 });
    assert((await rows(page)).length === 0, 'rows shown after a cancel');
    const problem = await page.textContent('.plot-problem');
    assert(problem.includes('cancelled'), `no word of the cancel: ${problem}`);
    // Search again from the keyboard: the button is reached and pressed.
    await page.locator('.search-run').focus();
    await page.keyboard.press('Enter');
    await shown(page);
    const listed = await rows(page);
    assert(listed.length > 0, 'nothing listed after searching again');
    // Ranked by the front: step time rises and memory falls along it.
    for (let i = 1; i < listed.length; i++) {
      assert(listed[i].step >= listed[i - 1].step && listed[i].memory <= listed[i - 1].memory,
        `the front's order at ${i}: ${JSON.stringify(listed.slice(i - 1, i + 1))}`);
    }
    // Every row fits the phone's width.
    const overflow = await page.$$eval('[data-search-rank]', (els) =>
      els.filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1).length);
    assert(overflow === 0, `${overflow} rows overflow the screen`);
    await page.locator('.plot-view').screenshot({ path: join(ARTIFACTS, 'search-view-phone.png') });
  }, { timeout: 120000, viewport: { width: 390, height: 844 } });
}
