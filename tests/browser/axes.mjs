// Browser tests of this round's axes: expert parallelism (EP) and context
// parallelism (CP) get a card, a legend entry and a switch only where the
// scenario has them; their figures are the CLI's; their switches move them
// as the CLI says; an embed shows them by `controls=ep,cp`. Registered by
// run.mjs (`registerAxisTests(...)`).

import { join } from 'node:path';
import { afterRun, painted, ready } from './harness.mjs';

/** Registers the tests; `h` carries run.mjs's helpers and paths. */
export function registerAxisTests(test, h) {
  const { assert, cliReport, matchesCli, serverUrl, ARTIFACTS } = h;

  async function goto(page, query) {
    await page.goto(serverUrl() + query);
    await ready(page);
    await painted(page);
  }

  /** The axes with a card among the figures, and with an entry in the timeline's legend. */
  const shown = (page) => page.evaluate(() => ({
    cards: [...document.querySelectorAll('.axis-figures .axis-card')].map((c) => [...c.classList].find((k) => k !== 'axis-card')),
    legend: [...document.querySelectorAll('.timeline .legend .sw')].map((s) => s.className.replace('sw ', ''))
      .filter((k) => ['tp', 'pp', 'dp', 'ep', 'cp'].includes(k)),
  }));
  const scenarioJson = (page) => page.getAttribute('[data-scenario-json]', 'data-scenario-json');

  // Cards only for the axes of degree above 1 (issue 58: moe-didactic has
  // TP 1 and PP 1; the ring has PP 1 and DP 1, but its gradients are
  // reduced over the 8 CP ranks, DP's group).
  for (const [preset, axes, absent, withCard] of [
    ['didactic', ['tp', 'pp', 'dp'], ['ep', 'cp'], ['tp', 'pp', 'dp']],
    ['moe-didactic', ['tp', 'pp', 'dp', 'ep'], ['cp'], ['dp', 'ep']],
    ['long-context-ring', ['tp', 'pp', 'dp', 'cp'], ['ep'], ['tp', 'dp', 'cp']],
  ]) {
    test(`axes: ${preset} shows the legend of ${axes.join(', ')}, cards of ${withCard.join(', ')}, and none of ${absent.join(', ')}; its figures are the CLI's`, async ({ page }) => {
      await goto(page, `?v=1&preset=${preset}`);
      const { cards, legend } = await shown(page);
      assert(JSON.stringify(cards) === JSON.stringify(withCard), `cards: ${cards}`);
      assert(JSON.stringify(legend) === JSON.stringify(axes), `legend: ${legend}`);
      const report = await matchesCli(page);
      for (const a of absent) assert(report.axes[a] === undefined, `the CLI reports ${a} for ${preset}`);
      for (const a of axes) assert(report.axes[a] !== undefined, `the CLI does not report ${a} for ${preset}`);
    }, { viewport: { width: 1440, height: 900 } });
  }

  test('axes: EP overlap on moe-didactic hides the all-to-alls under the other micro-batch, as the CLI says', async ({ page }) => {
    await goto(page, '?v=1&preset=moe-didactic');
    const sw = page.getByRole('switch', { name: 'EP overlap' });
    assert(!(await sw.isChecked()), 'EP overlap starts on');
    const before = cliReport(await scenarioJson(page));
    await afterRun(page, () => sw.click());
    await painted(page);
    const after = await matchesCli(page);
    assert(after.axes.ep.exposed_ms < 0.5 * before.axes.ep.exposed_ms,
      `EP exposed ${before.axes.ep.exposed_ms} -> ${after.axes.ep.exposed_ms} ms`);
    // Off, the window is only the backward's weight gradients; paired, the
    // other micro-batch's compute.
    assert(after.axes.ep.window_ms > 2 * before.axes.ep.window_ms && before.axes.ep.window_ms > 0,
      `EP window ${before.axes.ep.window_ms} -> ${after.axes.ep.window_ms} ms`);
    await page.locator('.axis-figures').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(ARTIFACTS, 'axes-ep-on-1440.png') });
  }, { viewport: { width: 1440, height: 900 } });

  test('axes: CP overlap off on the ring preset leaves each ring step exposed, as the CLI says', async ({ page }) => {
    await goto(page, '?v=1&preset=long-context-ring');
    const sw = page.getByRole('switch', { name: 'CP overlap' });
    assert(await sw.isChecked(), 'CP overlap starts off');
    const before = cliReport(await scenarioJson(page));
    await afterRun(page, () => sw.click());
    await painted(page);
    const after = await matchesCli(page);
    assert(before.axes.cp.hidden > 0.9 && after.axes.cp.exposed_ms > 0.5 * after.axes.cp.comm_ms,
      `CP hidden ${before.axes.cp.hidden} with overlap, exposed ${after.axes.cp.exposed_ms} of ${after.axes.cp.comm_ms} ms without`);
    await page.locator('.axis-figures').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(ARTIFACTS, 'axes-cp-off-1440.png') });
  }, { viewport: { width: 1440, height: 900 } });

  test('axes: an embed with controls=ep,cp shows both switches; the one its scenario lacks says why it changes nothing', async ({ page }) => {
    await goto(page, '?v=1&preset=moe-didactic&embed=1&controls=ep,cp');
    const ep = page.getByRole('switch', { name: 'EP overlap' });
    const cp = page.getByRole('switch', { name: 'CP overlap' });
    assert((await ep.count()) === 1 && (await cp.count()) === 1, 'the embed lacks a switch');
    const note = await page.locator('.field:has(#f-overlap-cp) .inert-why').textContent();
    assert(/Changes nothing here/.test(note), `the CP switch says: ${note}`);
    await afterRun(page, () => ep.click());
    assert(await ep.isChecked(), 'the EP switch did not turn on');
    // The embed keeps its own address up to date: the link now has EP overlap on.
    await page.waitForFunction(() => new URL(location.href).searchParams.get('ep_overlap') === '1', null, { timeout: 10000 })
      .catch(() => assert(false, `the embed's address does not say EP overlap is on: ${page.url()}`));
  }, { viewport: { width: 640, height: 900 } });
}
