// Browser tests of the zero-bubble schedules: the tour chapter "The bubble is
// compute that could hide communication" reveals the CLI's figures before
// and after its switch, and the ZB-2p preset next to 1F1B draws F, B and W
// apart with a legend entry at 1440 and at 375 pixels. Registered by run.mjs
// (`registerZeroBubbleTests(...)`).

import { join } from 'node:path';
import { afterRun, painted } from './harness.mjs';

const CHAPTER = 'The bubble is compute that could hide communication';

/** Registers the tests; `h` carries run.mjs's helpers and paths. */
export function registerZeroBubbleTests(test, h) {
  const { assert, close, cliReport, canvasDrawn, matchesCli, ARTIFACTS } = h;

  const at = (obj, path) => path.split('.').reduce((o, k) => (o == null ? undefined : o[k]), obj);
  const scenarioJson = (page) => page.getAttribute('[data-scenario-json]', 'data-scenario-json');

  test('zb: the zero-bubble tour chapter reveals the CLI figures before and after', async ({ page }) => {
    await afterRun(page, () => page.getByRole('button', { name: 'Start the guided tour' }).click());
    // Walk to the chapter by its title, whatever its number.
    for (let k = 0; ; k++) {
      assert(k < 20, `no chapter titled "${CHAPTER}"`);
      await page.waitForSelector('.tour .predict button');
      if ((await page.textContent('.tour h3')) === CHAPTER) break;
      await afterRun(page, () => page.locator('.tour .predict button').first().click());
      await afterRun(page, () => page.getByRole('button', { name: 'Next chapter' }).click());
    }
    // Before: the chapter's own scenario, 1F1B, as the CLI computes it.
    await painted(page);
    const beforeJson = await scenarioJson(page);
    assert(JSON.parse(beforeJson).parallel.schedule === '1f1b', 'the chapter does not start from 1F1B');
    const before = await matchesCli(page);
    // The prediction switches the schedule to ZB-1p and reveals the figures.
    await afterRun(page, () => page.locator('.tour .predict button').last().click());
    await painted(page);
    const afterJson = await scenarioJson(page);
    assert(JSON.parse(afterJson).parallel.schedule === 'zb-1p', 'the chapter did not switch to ZB-1p');
    const after = cliReport(afterJson);
    const shown = await page.$$eval('.tour .reveal [data-metric]', (els) =>
      els.map((e) => [e.dataset.metric, e.dataset.run, Number(e.dataset.value)]));
    const names = new Set(shown.map(([name]) => name));
    for (const name of ['step_time_ms', 'bubble_fraction', 'axes.dp.window_ms', 'axes.dp.exposed_ms']) {
      assert(names.has(name), `the reveal does not show ${name}: ${[...names].join(', ')}`);
    }
    for (const [name, run, value] of shown) {
      const expected = at(run === 'current' ? after : before, name);
      assert(typeof expected === 'number', `the CLI report has no ${name}`);
      assert(close(value, expected), `${name} (${run}): page shows ${value}, CLI says ${expected}`);
    }
    // The figures the explanation quotes are the ones revealed.
    const text = await page.textContent('.tour');
    const quoted = [
      before.step_time_ms.toFixed(1), after.step_time_ms.toFixed(1),
      before.axes.dp.window_ms.toFixed(2), after.axes.dp.window_ms.toFixed(2),
      `${after.axes.dp.exposed_ms.toFixed(2)} ms`,
      `${(before.bubble_fraction * 100).toFixed(1)}%`, `${(after.bubble_fraction * 100).toFixed(1)}%`,
    ];
    for (const figure of quoted) {
      assert(text.includes(figure), `the chapter does not quote ${figure}`);
    }
    await matchesCli(page);
    await canvasDrawn(page);
    await page.screenshot({ path: join(ARTIFACTS, 'zb-tour-chapter.png'), fullPage: false });
  }, { timeout: 240000 });

  test('zb: a bad zero-bubble combination is named with what is valid, in a link and at the control', async ({ page }) => {
    // A link: the field is named in the alert, and a valid scenario opens.
    await page.goto(`${new URL(page.url()).origin}/?v=1&schedule=zb-v&virtual_stages=3`);
    await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 30000 });
    const alert = page.locator('.link-errors[role="alert"] li[data-field="virtual_stages"]');
    assert((await alert.count()) === 1, 'the alert does not name virtual_stages');
    assert(/valid is 2/.test(await alert.textContent()), `the alert does not say what is valid: ${await alert.textContent()}`);
    assert((await page.evaluate(() => document.body.dataset.errors)) === '0', 'the link opened an invalid scenario');
    // The control: picking ZB-V sets two virtual stages; three are refused
    // next to the field, and the typed value is kept.
    await afterRun(page, () => page.selectOption('#f-parallel-schedule', 'zb-v'));
    assert((await page.inputValue('#f-parallel-virtual-stages')) === '2', 'ZB-V did not set two virtual stages');
    await matchesCli(page);
    await page.locator('#f-parallel-virtual-stages').fill('3');
    await page.waitForFunction(() => document.body.dataset.errors === '1');
    const message = await page.textContent('#f-parallel-virtual-stages-err');
    assert(/valid is 2/.test(message), `no useful message next to virtual stages: "${message}"`);
    assert((await page.inputValue('#f-parallel-virtual-stages')) === '3', 'the typed value was not kept');
  });

  for (const [width, height] of [[1440, 900], [375, 700]]) {
    test(`zb: ZB-2p next to 1F1B reads at ${width} px, with W in the legend`, async ({ page }) => {
      await painted(page);
      assert((await page.inputValue('#f-preset')) === 'zb-1.5b-24', 'the 1F1B preset did not open');
      // The same preset with its schedule switched: the ghost compares runs
      // of one preset only, so it keeps the 1F1B run beside the ZB-2p one.
      await afterRun(page, () => page.selectOption('#f-parallel-schedule', 'zb-2p'));
      await painted(page);
      await canvasDrawn(page);
      await matchesCli(page);
      const entry = page.locator('.legend li:has(.sw.wgrad)');
      await entry.scrollIntoViewIfNeeded();
      assert(await entry.isVisible(), 'no visible legend entry for W');
      assert(/weight gradient \(W\)/.test(await entry.textContent()), 'the W legend entry does not say what W is');
      const box = await entry.boundingBox();
      assert(box && box.x >= 0 && box.x + box.width <= width, `the W legend entry leaves the ${width} px page`);
      const ghost = Number(await page.getAttribute('[data-metric="step_time_ms"][data-run="previous"]', 'data-value'));
      const json = JSON.parse(await scenarioJson(page));
      json.parallel.schedule = '1f1b';
      const oneF = cliReport(JSON.stringify(json));
      assert(close(ghost, oneF.step_time_ms), `the ghost shows ${ghost}, 1F1B is ${oneF.step_time_ms}`);
      await page.screenshot({ path: join(ARTIFACTS, `zb-2p-vs-1f1b-${width}.png`), fullPage: width < 500 });
    }, { viewport: { width, height }, query: '?v=1&preset=zb-1.5b-24', timeout: 120000 });
  }
}
