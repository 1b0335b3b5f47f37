// Browser test of the tour's CoCoNet chapter (issue 16): the chapter opens
// on the `coconet-inference` preset with the boundary unsliced and fusion
// off, its reveal slices and fuses, and every figure it shows, before and
// after, equals the CLI's for the page's own scenario. Registered by run.mjs
// (`registerCoconetTests(...)`).

import { afterRun, painted } from './harness.mjs';

/** Registers the tests; `h` carries run.mjs's helpers. */
export function registerCoconetTests(test, h) {
  const { assert, close, cliReport, matchesCli } = h;

  const at = (obj, path) => path.split('.').reduce((o, k) => (o == null ? undefined : o[k]), obj);
  const scenarioJson = (page) => page.getAttribute('[data-scenario-json]', 'data-scenario-json');

  /** The reveal's figures of one run ("current" or "previous"), by metric name. */
  const revealed = (page, run) => page.$$eval(`.tour .reveal [data-metric][data-run="${run}"]`,
    (els) => els.map((e) => [e.dataset.metric, Number(e.dataset.value)]));

  test('coconet: the tour chapter slices and fuses, and shows the CLI figures before and after', async ({ page }) => {
    await page.getByRole('button', { name: 'Start the guided tour' }).click();
    // Walk to the chapter by its title: chapters may be added before it.
    for (let chapter = 1; ; chapter++) {
      await page.waitForSelector('.tour .predict button');
      const title = await page.textContent('.tour h3');
      if (/CoCoNet/.test(title)) break;
      assert(chapter < 20, 'no CoCoNet chapter in the tour');
      await afterRun(page, () => page.getByRole('button', { name: 'Skip: just show me' }).click());
      await page.getByRole('button', { name: 'Next chapter' }).click();
    }
    await painted(page);
    // Before: the preset, boundary unsliced, fusion off.
    const beforeJson = await scenarioJson(page);
    const before = JSON.parse(beforeJson);
    assert(before.overlap.pp_chunks === 1 && before.overlap.fuse === false,
      `the chapter opened on ${JSON.stringify(before.overlap)}`);
    const beforeReport = await matchesCli(page);

    await afterRun(page, () => page.getByRole('button', { name: 'Skip: just show me' }).click());
    await painted(page);
    const after = JSON.parse(await scenarioJson(page));
    assert(after.overlap.pp_chunks === 8 && after.overlap.fuse === true,
      `the action set ${JSON.stringify(after.overlap)}`);
    const afterReport = await matchesCli(page);

    const current = await revealed(page, 'current');
    const previous = await revealed(page, 'previous');
    assert(current.length === 4 && previous.length === 4,
      `the reveal shows ${current.length} figures and ${previous.length} before values`);
    for (const [name, value] of current) {
      assert(close(value, at(afterReport, name)), `${name}: reveal shows ${value}, CLI says ${at(afterReport, name)}`);
    }
    for (const [name, value] of previous) {
      assert(close(value, at(beforeReport, name)), `${name} before: reveal shows ${value}, CLI says ${at(beforeReport, name)}`);
    }
    // The chapter's claims hold on what the page shows: the step gets
    // shorter, compute loses the fused kernels, PP's exposed time shrinks.
    const shown = Object.fromEntries(current);
    const was = Object.fromEntries(previous);
    assert(shown.step_time_ms < was.step_time_ms, 'the step did not get shorter');
    assert(was.compute_ms - shown.compute_ms > 50, `compute fell by only ${was.compute_ms - shown.compute_ms} ms`);
    assert(shown['axes.pp.exposed_ms'] < was['axes.pp.exposed_ms'], 'PP exposed did not shrink');
    // The CLI agrees with itself for the chapter's JSON as the page wrote it.
    assert(close(cliReport(beforeJson).step_time_ms, beforeReport.step_time_ms), 'the CLI is not deterministic');
  }, { timeout: 180000 });
}
