// Browser tests of the timeline's controls when a step has figures but no
// timeline (over the core's limit for one): the link-lane picker ("Links
// of"), zoom and playback are disabled and say why, instead of listing
// nothing (or the GPUs of a timeline no longer shown) or acting on nothing.
// Registered by run.mjs (`registerLinkPickerTests(...)`).
// Every wait ends in "finished or refused", never in a timing.

import { painted } from './harness.mjs';

/** 1T with TP overlap on and twenty times its micro-batches: figures, no timeline. */
const NO_TIMELINE_QUERY = '?v=1&preset=megatron-1t&tp_overlap=1&global_batch=61440';

/** What the "Links of" select shows: disabled, its options' texts, its value and title. */
const picker = (page) => page.evaluate(() => {
  const label = [...document.querySelectorAll('.timeline-head label')].find((l) => l.textContent.startsWith('Links of'));
  const select = label?.querySelector('select');
  return select ? {
    disabled: select.disabled,
    options: [...select.options].map((o) => o.textContent),
    value: select.value,
    shown: select.selectedOptions[0]?.textContent ?? null,
    title: select.title,
  } : null;
});

/** The timeline's zoom and playback controls: which are disabled, and the groups' titles. */
const timelineControls = (page) => page.evaluate(() => {
  const groups = ['.timeline-head .zoom', '.playback'].map((sel) => document.querySelector(sel));
  return groups.map((g) => ({
    title: g?.title ?? null,
    disabled: g ? [...g.querySelectorAll('button, input, select')].map((c) => c.disabled) : [],
  }));
});

/** Waits for the page to show the step's figures without a timeline, or a refusal. */
const untilNoTimeline = (page) => page.waitForFunction(() => document.body.dataset.timelineRefused === '1'
  || document.body.dataset.errors === '1' || document.body.dataset.runAlert === '1', null, { timeout: 180000 });

/** Registers the tests; `h` carries run.mjs's helpers. */
export function registerLinkPickerTests(test, h) {
  const { assert } = h;

  test('links picker: without a timeline it is disabled and says why, as are zoom and playback; with one it lists the simulated GPUs', async ({ page }) => {
    // A timeline first: the picker lists the simulated GPUs.
    await painted(page);
    const drawn = await picker(page);
    assert(drawn, 'no "Links of" select');
    assert(!drawn.disabled && drawn.options.length > 0 && drawn.options.every((o) => /^GPU \d+ \(stage \d+\)$/.test(o)),
      `with a timeline: ${JSON.stringify(drawn)}`);
    assert(drawn.shown === drawn.options[0], `with a timeline the picker shows ${drawn.shown}`);
    const live = await timelineControls(page);
    assert(live.every((g) => g.disabled.length > 0 && g.disabled.every((d) => !d) && !g.title),
      `with a timeline, zoom and playback: ${JSON.stringify(live)}`);

    // In the same page, a step whose timeline is over the limit (as Back or
    // Forward to such a link does): the GPUs of the timeline before must not stay.
    await page.evaluate((q) => {
      history.pushState(null, '', q);
      dispatchEvent(new PopStateEvent('popstate'));
    }, NO_TIMELINE_QUERY);
    await untilNoTimeline(page);
    assert(await page.evaluate(() => document.body.dataset.timelineRefused) === '1',
      `the step was refused: ${await page.evaluate(() => document.querySelector('.run-alert, .field-error')?.textContent)}`);
    const none = await picker(page);
    assert(none.disabled, `without a timeline the picker is enabled: ${JSON.stringify(none)}`);
    assert(none.options.length === 1 && none.shown === 'none: no timeline', `without a timeline: ${JSON.stringify(none)}`);
    assert(/no timeline/.test(none.title) && /no link lanes/.test(none.title), `the picker does not say why: ${none.title}`);
    // Zoom and playback have nothing to act on either: disabled, and saying why.
    const idle = await timelineControls(page);
    assert(idle.every((g) => g.disabled.length > 0 && g.disabled.every((d) => d) && /no timeline/.test(g.title)),
      `without a timeline, zoom and playback: ${JSON.stringify(idle)}`);

    // Opened straight from the link: the same, though no timeline was ever shown.
    await page.reload();
    await untilNoTimeline(page);
    const fresh = await picker(page);
    assert(fresh.disabled && fresh.shown === 'none: no timeline', `opened from the link: ${JSON.stringify(fresh)}`);

    // Back to a step with a timeline: the picker lists its GPUs again.
    await page.evaluate(() => {
      history.pushState(null, '', '?v=1&preset=contention');
      dispatchEvent(new PopStateEvent('popstate'));
    });
    await page.waitForFunction(() => document.body.dataset.timelineRefused === '0', null, { timeout: 60000 });
    await painted(page);
    const again = await picker(page);
    assert(!again.disabled && again.options.length > 0 && again.value === '0' && again.shown === again.options[0],
      `with a timeline again: ${JSON.stringify(again)}`);
    const back = await timelineControls(page);
    assert(back.every((g) => g.disabled.every((d) => !d) && !g.title), `with a timeline again, zoom and playback: ${JSON.stringify(back)}`);
  }, { timeout: 300000 });
}
