// Browser tests of figures that are not the current controls' (issue 46):
// refused controls dim the figures and timeline, with the refusal beside
// them and a link to the control; and the sentence that says why the step
// moved, on the page, in the table view and in an embed.
// Registered by run.mjs (`registerStaleTests(...)`).

import { join } from 'node:path';
import { afterRun, painted, metric, runSeq } from './harness.mjs';

export function registerStaleTests(test, h) {
  const { assert, ARTIFACTS } = h;

  /** The opacity the figures, the timeline and the window charts are drawn with. */
  const opacities = (page) => page.evaluate(() => {
    const of = (sel) => Number(getComputedStyle(document.querySelector(sel)).opacity);
    return { fig: of('.headline .fig'), canvas: of('.timeline .canvas-wrap'), axes: of('.axis-figures .axes') };
  });

  test('stale: refused, then another field changed: the figures are dimmed, the refusal beside them links to its control', async ({ page }) => {
    await painted(page);
    const clear = await opacities(page);
    assert(clear.fig === 1 && clear.canvas === 1, `dimmed before any refusal: ${JSON.stringify(clear)}`);
    const seq = await runSeq(page);
    await page.locator('#f-parallel-tp').fill('3');
    await page.waitForFunction(() => document.body.dataset.errors === '1');
    // Another field, while the controls are still refused.
    await page.locator('#f-hardware-nic-gbps').fill('12.5');
    await page.waitForTimeout(400);
    assert((await runSeq(page)) === seq, 'a refused scenario ran');
    assert((await page.evaluate(() => document.body.dataset.stale)) === 'refused', 'the page does not say its figures are stale');
    const dim = await opacities(page);
    assert(dim.fig <= 0.5 && dim.canvas <= 0.5 && dim.axes <= 0.5, `old figures shown as current: ${JSON.stringify(dim)}`);
    const note = page.locator('.stale-note');
    assert(await note.isVisible(), 'no note beside the figures');
    const text = await note.textContent();
    assert(/last valid scenario/.test(text) && /tp x pp x dp = 3 x/.test(text) && !/NIC/.test(text), text);
    // Beside the figures: right under the headline, on screen.
    const [head, box] = await Promise.all(['.headline', '.stale-note'].map((s) => page.locator(s).boundingBox()));
    assert(box.y >= head.y + head.height - 1 && box.y - (head.y + head.height) < 40 && box.y < 900, `note at ${JSON.stringify(box)}, headline ${JSON.stringify(head)}`);
    await page.screenshot({ path: join(ARTIFACTS, 'stale-refused-1440.png') });
    // The link goes to the refused control.
    const link = page.locator('.stale-note a.stale-fix');
    assert((await link.getAttribute('href')) === '#f-parallel-tp', await link.getAttribute('href'));
    await link.click();
    assert(await page.evaluate(() => document.activeElement?.id === 'f-parallel-tp'), 'the link did not focus TP');
    // Valid again: one run, nothing dimmed.
    await afterRun(page, () => page.locator('#f-parallel-tp').fill('4'));
    await painted(page);
    await page.waitForFunction(() => document.body.dataset.stale === '');
    const back = await opacities(page);
    assert(back.fig === 1 && back.canvas === 1, `still dimmed: ${JSON.stringify(back)}`);
    assert(!(await note.isVisible()), 'the note stays');
  }, { viewport: { width: 1440, height: 900 } });

  test('why: a switch\'s step change is attributed in words, on the page, in the table view and in an embed', async ({ page }) => {
    await painted(page);
    assert(await page.locator('.headline .step-why').isHidden(), 'a sentence with nothing changed');
    const before = await metric(page, 'step_time_ms');
    await afterRun(page, () => page.getByRole('switch', { name: 'DP overlap' }).click());
    const after = await metric(page, 'step_time_ms');
    const why = await page.textContent('.headline .step-why');
    assert(/^DP overlap off: DP exposed \+/.test(why), why);
    const sign = after > before ? '+' : '−';
    assert(why.includes(`: step ${sign}`) && why.endsWith('.'), why);
    await page.locator('details.table-view > summary').click();
    assert((await page.textContent('.table-view .step-why')) === why, 'the table view says otherwise');
    // An embed says it too.
    await page.goto(page.url().split('?')[0] + '?v=1&embed=1&controls=overlap');
    await page.waitForFunction(() => document.body.dataset.ready === '1');
    await afterRun(page, () => page.getByRole('switch', { name: 'DP overlap' }).click());
    const embedded = await page.textContent('.step-why');
    assert(/^DP overlap off: DP exposed \+/.test(embedded), embedded);
  });
}
