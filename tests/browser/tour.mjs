// Browser tests of the guided tour (src/ui/tour.rs, crates/view/src/tour/):
// verdicts from the figures, the tour pointing the timeline at its region and
// keeping it on screen, before and after lanes, the step summary, reset to
// preset and the ghost. Registered by run.mjs (`registerTourTests(...)`).
// Screenshots of every chapter, asked and revealed, at 1440x900 and 375x700
// go to test-artifacts/tour-*.png.

import { join } from 'node:path';
import { afterRun, painted, metric, runSeq } from './harness.mjs';

/** Registers the tests; `h` carries run.mjs's helpers and paths. */
export function registerTourTests(test, h) {
  const { assert, matchesCli, ARTIFACTS } = h;

  /** Where the canvas, the tour and the viewport are, in CSS pixels. */
  const boxes = (page) => page.evaluate(() => {
    const box = (sel) => {
      const r = document.querySelector(sel)?.getBoundingClientRect();
      return r ? { top: r.top, bottom: r.bottom } : null;
    };
    return {
      canvas: box('.timeline canvas'), tour: box('.tour'), verdict: box('.tour .verdict'),
      height: window.innerHeight, width: window.innerWidth,
    };
  });

  /** The fractions of the step the timeline shows, as painted. */
  const view = async (page) => {
    const v = await page.getAttribute('.timeline canvas', 'data-view');
    return v ? v.split('-').map(Number) : [NaN, NaN];
  };

  /** Walks every chapter with the given choice index, checking each; screenshots. */
  async function walk(page, label, { pick = 0, onScreen = true } = {}) {
    await page.getByRole('button', { name: 'Start the guided tour' }).click();
    const seen = [];
    for (let chapter = 1; chapter <= 20; chapter++) {
      await page.waitForFunction((n) => new RegExp(`Chapter ${n} of`).test(document.querySelector('.tour').textContent), chapter);
      // The choices wait for the chapter's own "before" run.
      await page.waitForSelector('.tour .predict button:not([disabled])');
      await painted(page);
      const intro = await page.textContent('.tour .tour-intro');
      assert(!/[{}]/.test(intro) && /\d/.test(intro), `chapter ${chapter}: intro not filled: ${intro}`);
      await page.screenshot({ path: join(ARTIFACTS, `tour-${label}-c${chapter}-ask.png`) });
      const choices = await page.$$eval('.tour .predict button:not(.link)', (els) => els.map((e) => e.textContent));
      await afterRun(page, () => page.locator('.tour .predict button').nth(pick).click());
      await page.waitForSelector('.tour .verdict[data-right]');
      await painted(page);
      const verdict = await page.textContent('.tour .verdict');
      const right = (await page.getAttribute('.tour .verdict', 'data-right')) === 'true';
      // The verdict quotes the right answer when the pick was wrong, and the
      // figures it quotes are the page's.
      if (right) {
        assert(verdict.startsWith('Right: '), `chapter ${chapter}: ${verdict}`);
      } else {
        assert(/^Not this time: the figures say “/.test(verdict), `chapter ${chapter}: ${verdict}`);
        const quoted = verdict.match(/“([^”]+)”/)[1];
        assert(choices.includes(quoted) && quoted !== choices[pick], `chapter ${chapter}: quotes ${quoted}`);
      }
      const explain = await page.textContent('.tour .tour-explain');
      assert(!/[{}]/.test(explain + verdict), `chapter ${chapter}: unfilled text`);
      const step = await metric(page, 'step_time_ms');
      assert(step > 0, `chapter ${chapter}: no step time`);
      const [v0, v1] = await view(page);
      if (onScreen) {
        // The timeline shares the screen with the tour: beside it on a wide
        // screen, above it on a phone (where the tour is a sheet at the bottom).
        const b = await boxes(page);
        const free = b.width < 960 ? b.tour.top : b.height;
        const shown = Math.min(b.canvas.bottom, free) - Math.max(b.canvas.top, 0);
        assert(shown >= Math.min(250, b.canvas.bottom - b.canvas.top),
          `chapter ${chapter}: the timeline is off screen (${JSON.stringify(b)})`);
        assert(b.verdict.top >= Math.max(0, b.tour.top) && b.verdict.bottom <= b.height,
          `chapter ${chapter}: the verdict is off screen (${JSON.stringify(b)})`);
        // "Next chapter" stays on screen however long the reveal (issue 58).
        const nb = await page.getByRole('button', { name: /Next chapter|Finish the tour/ }).boundingBox();
        assert(nb && nb.y >= 0 && nb.y + nb.height <= b.height,
          `chapter ${chapter}: "Next chapter" is off screen (${JSON.stringify(nb)}, height ${b.height})`);
      }
      // The step's change in its named parts: one unit, no signed zero.
      const parts = await page.textContent('.tour .tour-parts');
      if (parts) {
        assert(/^The step in parts: /.test(parts) && !/[+−]0(\.0+)? /.test(parts), `chapter ${chapter}: ${parts}`);
        const units = new Set([...parts.matchAll(/\d (ms|µs|s)\b/g)].map((m) => m[1]));
        assert(units.size === 1, `chapter ${chapter}: units ${[...units]} in ${parts}`);
      }
      await page.screenshot({ path: join(ARTIFACTS, `tour-${label}-c${chapter}-reveal.png`) });
      seen.push({ chapter, right, zoomed: v1 - v0 < 0.999, verdict });
      const next = page.getByRole('button', { name: /Next chapter|Finish the tour/ });
      const finish = /Finish/.test(await next.textContent());
      await next.click();
      if (finish) break;
    }
    await page.waitForSelector('.tour-done');
    return seen;
  }

  test('tour: every chapter reveals a verdict from its figures, zoomed to its region, timeline on screen (1440x900)', async ({ page }) => {
    const seen = await walk(page, '1440');
    assert(seen.length >= 6, `only ${seen.length} chapters`);
    // Picking the first answer everywhere is right on some chapters and wrong on others.
    assert(seen.some((s) => s.right) && seen.some((s) => !s.right), JSON.stringify(seen));
    // Every chapter points the timeline at the part of the step it talks about.
    assert(seen.every((s) => s.zoomed), JSON.stringify(seen));
  }, { viewport: { width: 1440, height: 900 }, timeout: 180000 });

  test('tour: on a phone the tour sits under the timeline, both on screen (375x700)', async ({ page }) => {
    const seen = await walk(page, '375', { pick: 1 });
    assert(seen.length >= 6, `only ${seen.length} chapters`);
  }, { viewport: { width: 375, height: 700 }, timeout: 180000 });

  test('tour: the first chapter zooms to the last backward and shows the lanes before', async ({ page }) => {
    await page.getByRole('button', { name: 'Start the guided tour' }).click();
    await page.waitForSelector('.tour .predict button:not([disabled])');
    await painted(page);
    const [a0, a1] = await view(page);
    assert(a1 - a0 < 0.5 && a1 > 0.9, `not zoomed to the end of the step: ${a0}-${a1}`);
    await afterRun(page, () => page.getByRole('button', { name: 'Skip: just show me' }).click());
    await painted(page);
    assert((await page.getAttribute('.timeline canvas', 'data-before')) === '1', 'no lanes before');
    const verdict = await page.textContent('.tour .verdict');
    assert(/^The figures say “Some of it disappears, at most half”/.test(verdict), verdict);
    // The reveal's figures are the CLI's for the page's scenario.
    await matchesCli(page);
  }, { timeout: 60000 });

  test('tour: switching an axis draws before and after at Fit; the summary follows the figures', async ({ page }) => {
    await painted(page);
    assert((await page.getAttribute('.timeline canvas', 'data-before')) === '0', 'lanes before on a fresh page');
    const sw = page.getByRole('switch', { name: 'DP overlap' });
    // Off, then on again: the run before (off) is the longer one.
    await afterRun(page, () => sw.click());
    await afterRun(page, () => sw.click());
    await painted(page);
    assert((await page.getAttribute('.timeline canvas', 'data-before')) === '1', 'no lanes before after a switch');
    const [v0, v1] = await view(page);
    // Fit shows the longer of the two steps (DP overlap off is longer).
    assert(v0 === 0 && v1 > 1.0, `Fit does not show the step before: ${v0}-${v1}`);
    const summary = await page.textContent('.step-summary');
    const base = await metric(page, 'baseline_ms');
    const step = await metric(page, 'step_time_ms');
    // In the all-off step's unit and decimals (one unit per sentence).
    assert(summary.includes(`Overlap saves ${(base - step).toFixed(base >= 100 ? 1 : 2)} ms`), summary);
    assert(/still exposed: (TP|PP|DP) /.test(summary), summary);
    await page.screenshot({ path: join(ARTIFACTS, 'tour-before-after.png') });
  });

  test('tour: reset to preset, the modified mark, and a ghost only within one preset', async ({ page }) => {
    await painted(page);
    const mark = () => page.getAttribute('.preset-state', 'data-modified');
    assert((await mark()) === 'false', 'a fresh preset is marked modified');
    assert(await page.getByRole('button', { name: 'Reset to preset' }).isDisabled(), 'reset enabled on a fresh preset');
    await afterRun(page, () => page.getByRole('switch', { name: 'TP overlap' }).click());
    await page.waitForFunction(() => document.querySelector('.preset-state').dataset.modified === 'true');
    assert(!(await page.locator('.modified-mark').isHidden()), 'no modified mark');
    // The ghost compares with the run before, in the same preset.
    const ghost = await page.getAttribute('[data-metric="step_time_ms"][data-run="previous"]', 'data-value');
    assert(ghost !== null && Number(ghost) > 0, 'no ghost within the preset');
    await afterRun(page, () => page.getByRole('button', { name: 'Reset to preset' }).click());
    await page.waitForFunction(() => document.querySelector('.preset-state').dataset.modified === 'false');
    assert(await page.getByRole('switch', { name: 'TP overlap' }).isChecked(), 'reset left TP overlap off');
    // Another preset: no "was" from the one before.
    await afterRun(page, () => page.selectOption('#f-preset', 'contention'));
    await painted(page);
    const hidden = await page.locator('.headline [data-metric="step_time_ms"][data-run="previous"]').isHidden();
    assert(hidden, 'the ghost compares two presets');
    assert((await page.getAttribute('.timeline canvas', 'data-before')) === '0', 'lanes before from another preset');
    // The tour's last change is marked, and Reset brings the preset back.
    await page.getByRole('button', { name: 'Start the guided tour' }).click();
    await page.waitForSelector('.tour .predict button:not([disabled])');
    await afterRun(page, () => page.getByRole('button', { name: 'Skip: just show me' }).click());
    await page.waitForFunction(() => document.querySelector('.preset-state').dataset.modified === 'true');
    // Leaving gives the reader's scenario back; the tour's last one is a click away.
    await page.getByRole('button', { name: 'Leave the tour' }).click();
    await page.waitForFunction(() => document.querySelector('#f-preset').value === 'contention'
      && document.querySelector('.preset-state').dataset.modified === 'false');
    await page.getByRole('button', { name: 'Show the tour\'s last scenario' }).click();
    await page.waitForFunction(() => document.querySelector('.preset-state').dataset.modified === 'true');
    await afterRun(page, () => page.getByRole('button', { name: 'Reset to preset' }).click());
    await page.waitForFunction(() => document.querySelector('.preset-state').dataset.modified === 'false');
    assert((await page.inputValue('#f-preset')) === 'didactic', 'the tour did not say which preset it started from');
    assert(await page.getByRole('switch', { name: 'TP overlap' }).isChecked(), 'reset left the tour\'s TP overlap off');
    assert((await runSeq(page)) > 0, 'no run');
  });

  /** The page's scenario as JSON, and its view as painted. */
  const scenarioJson = (page) => page.getAttribute('[data-scenario-json]', 'data-scenario-json');
  /** What has keyboard focus: its tag, text and whether it is in the tour. */
  const focused = (page) => page.evaluate(() => {
    const a = document.activeElement;
    return { tag: a?.tagName, text: a?.textContent ?? '', inTour: !!a?.closest('.tour') };
  });
  /** Waits until the page shows `json`, simulated and painted (after `afterRun`:
   * the run is requested a task after the input changes). */
  async function showing(page, json) {
    await page.waitForFunction((j) => document.querySelector('[data-scenario-json]')?.dataset.scenarioJson === j
      && document.body.dataset.simulating === '0', json, { timeout: 60000 });
    await painted(page);
  }

  test('tour: Leave gives back the reader\'s scenario and view; the tour\'s last one is a click away; focus follows', async ({ page }) => {
    await painted(page);
    const json0 = await scenarioJson(page);
    const step0 = await metric(page, 'step_time_ms');
    const [z0, z1] = await view(page);
    assert(z1 - z0 < 0.5, `the link's zoom is not applied: ${z0}-${z1}`);
    // Enter on the start button moves focus to the first chapter's heading.
    await page.getByRole('button', { name: 'Start the guided tour' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForSelector('.tour .predict button:not([disabled])');
    await page.waitForFunction(() => document.activeElement?.matches('.tour h3'));
    assert(/DP hides/.test((await focused(page)).text), JSON.stringify(await focused(page)));
    // Skip to chapter 4: focus lands on the verdict, then on each heading.
    for (let chapter = 1; chapter < 4; chapter++) {
      await page.waitForSelector('.tour .predict button:not([disabled])');
      await afterRun(page, () => page.getByRole('button', { name: 'Skip: just show me' }).click());
      await page.waitForFunction(() => document.activeElement?.matches('.tour .verdict'));
      await page.getByRole('button', { name: 'Next chapter' }).click();
      await page.waitForFunction((n) => new RegExp(`Chapter ${n} of`).test(document.querySelector('.tour').textContent)
        && document.activeElement?.matches('.tour h3'), chapter + 1);
    }
    await page.waitForSelector('.tour .predict button:not([disabled])');
    const tours = await scenarioJson(page);
    assert(tours !== json0 && /contention/.test(await page.inputValue('#f-preset')), 'chapter 4 is not on its own scenario');
    await afterRun(page, () => page.getByRole('button', { name: 'Leave the tour' }).click());
    await showing(page, json0);
    assert((await metric(page, 'step_time_ms')) === step0, `step ${await metric(page, 'step_time_ms')} is not the reader's ${step0}`);
    const [b0, b1] = await view(page);
    assert(Math.abs(b0 - z0) < 1e-6 && Math.abs(b1 - z1) < 1e-6, `view ${b0}-${b1} is not the reader's ${z0}-${z1}`);
    const note = await page.textContent('.tour-returned');
    assert(/^Back to your scenario/.test(note), note);
    assert((await focused(page)).inTour, 'focus left the tour on leaving');
    await page.waitForFunction((j) => !/chapter=/.test(location.search) && /tp_chunks=2/.test(location.search), json0);
    // The tour's last scenario, one click away, and back again.
    await afterRun(page, () => page.getByRole('button', { name: 'Show the tour\'s last scenario' }).click());
    await showing(page, tours);
    await afterRun(page, () => page.getByRole('button', { name: 'Back to your scenario' }).click());
    await showing(page, json0);
    assert((await metric(page, 'step_time_ms')) === step0, 'back again is not the reader\'s step');
  }, { query: '?v=1&tp_chunks=2&pp_overlap=0&nic_gbps=12.5&zoom=0.2-0.6', timeout: 120000 });

  /** How many chapters the tour has, as an open chapter's heading says ("Chapter 1 of N"). */
  const chapterCount = async (page) => {
    const [, n] = (await page.textContent('.tour .chapter-no')).match(/Chapter \d+ of (\d+)/) ?? [];
    assert(n, 'no chapter count on the open chapter');
    return Number(n);
  };

  test('tour: Finish on the last chapter gives back the link\'s scenario (nothing of the chapter left set)', async ({ page }) => {
    // The link's own scenario, then the tour's length from its first chapter.
    await painted(page);
    const json0 = await scenarioJson(page);
    await page.getByRole('button', { name: 'Start the guided tour' }).click();
    await page.waitForSelector('.tour .predict button:not([disabled])');
    const last = await chapterCount(page);
    // Links skip the retired number 14 (tour::RETIRED_CHAPTERS): the 14th
    // chapter and those after it are written one higher.
    const lastLink = last >= 14 ? last + 1 : last;
    await page.goto(page.url().split('?')[0] + `?v=1&tp_chunks=2&chapter=${lastLink}`);
    await page.waitForSelector('.tour .predict button:not([disabled])');
    assert(new RegExp(`Chapter ${last} of ${last}`).test(await page.textContent('.tour')), `the link did not open chapter ${last}`);
    assert((await scenarioJson(page)) !== json0, 'the last chapter is on the link\'s scenario');
    await afterRun(page, () => page.getByRole('button', { name: 'Skip: just show me' }).click());
    await page.getByRole('button', { name: 'Finish the tour' }).click();
    await page.waitForSelector('.tour-done');
    await showing(page, json0);
    assert(/"tp_chunks":\s*2/.test(await scenarioJson(page)), 'not the link\'s scenario');
    assert(/^Back to your scenario/.test(await page.textContent('.tour-returned')), 'no word on the scenario given back');
  }, { query: '?v=1&tp_chunks=2', timeout: 90000 });

  test('tour: a chapter link opens the chapter\'s own scenario and says so; out of range is refused with the range', async ({ page }) => {
    await page.waitForSelector('.tour .predict button:not([disabled])');
    await painted(page);
    for (const axis of ['TP', 'PP', 'DP']) {
      assert(!(await page.getByRole('switch', { name: `${axis} overlap` }).isChecked()), `${axis} overlap is on in chapter 1`);
    }
    const intro = await page.textContent('.tour .tour-intro');
    const comm = await metric(page, 'axes.dp.comm_ms');
    const exposed = await metric(page, 'axes.dp.exposed_ms');
    assert(/every overlap off/.test(intro) && Math.abs(comm - exposed) < 1e-9 * comm, `${intro} over DP ${exposed} of ${comm}`);
    assert(/Opened by a link, on chapter 1's own scenario \(Didactic/.test(await page.textContent('.tour-link-note')), 'no word on the chapter\'s scenario');
    const [v0, v1] = await view(page);
    assert(v1 - v0 < 0.5, `chapter 1 from a link is not zoomed: ${v0}-${v1}`);
    // Leaving goes to the link's own scenario: every overlap on.
    await page.getByRole('button', { name: 'Leave the tour' }).click();
    for (const axis of ['TP', 'PP', 'DP']) {
      const sw = page.getByRole('switch', { name: `${axis} overlap` });
      for (let i = 0; i < 50 && !(await sw.isChecked()); i++) await page.waitForTimeout(100);
      assert(await sw.isChecked(), `${axis} overlap is not the link's (on) after leaving`);
    }
    // Chapter 7 from a link compares its own before and after.
    await page.goto(page.url().split('?')[0] + '?v=1&chapter=7');
    await page.waitForSelector('.tour .predict button:not([disabled])');
    await afterRun(page, () => page.getByRole('button', { name: 'Skip: just show me' }).click());
    await page.waitForSelector('.tour .verdict[data-right]');
    const verdict = await page.textContent('.tour .verdict');
    const [, from, to] = verdict.match(/from ([\d.]+ \S+) to ([\d.]+ \S+?);/) ?? [];
    assert(from && to && from !== to, `chapter 7: ${verdict}`);
    // A link to chapter 14, written before it became part of chapter 5,
    // opens chapter 5 (issue 58).
    const count = await chapterCount(page);
    await page.goto(page.url().split('?')[0] + '?v=1&chapter=14');
    await page.waitForFunction(() => /Chapter 5 of/.test(document.querySelector('.tour')?.textContent ?? ''));
    assert((await page.textContent('.tour h3')).startsWith('Where overlap stops being free'), await page.textContent('.tour h3'));
    // The number after the retired 14 opens the 14th chapter, written
    // after the merge.
    await page.goto(page.url().split('?')[0] + '?v=1&chapter=15');
    await page.waitForFunction(() => /Chapter 14 of/.test(document.querySelector('.tour')?.textContent ?? ''));
    assert((await page.textContent('.tour h3')).startsWith('The best layout is decided by windows'), await page.textContent('.tour h3'));
    // A chapter the tour never had: past the last one.
    const past = count + 2;
    await page.goto(page.url().split('?')[0] + `?v=1&chapter=${past}`);
    await page.waitForFunction(() => document.body.dataset.ready === '1');
    const alert = await page.textContent('[role="alert"]');
    assert(alert.includes(`"${past}" is not a chapter of the guided tour: valid are 1 to ${count + 1}`), alert);
    assert(!/Chapter \d+ of/.test(await page.textContent('.tour')), 'an out-of-range chapter opened the tour');
  }, { query: '?v=1&chapter=1', timeout: 90000 });
}
