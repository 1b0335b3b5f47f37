// Browser tests of the timeline's drawing (src/timeline/): what hover and a
// new run do to the canvas. Registered by run.mjs (`registerTimelineTests(...)`).
// Every wait ends on a mark the page sets, never on a timing.

import { afterRun, painted } from './harness.mjs';

/** Registers the tests; `h` carries run.mjs's helpers. */
export function registerTimelineTests(test, h) {
  const { assert, canvasDrawn } = h;

  /** A fingerprint of every pixel of the timeline's canvas. */
  const pixels = (page) => page.evaluate(() => {
    const c = document.querySelector('canvas');
    const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    let h = 0;
    for (let i = 0; i < data.length; i++) h = (h * 31 + data[i]) | 0;
    return `${c.width}x${c.height}:${h}`;
  });
  const mark = (page, id) => page.evaluate((id) => {
    const e = document.getElementById(id);
    if (!e || e.hidden) return null;
    const r = e.getBoundingClientRect();
    const c = document.querySelector('canvas').getBoundingClientRect();
    // The clip box's size: the canvas's backing store may be taller than the picture.
    const v = document.querySelector('canvas').parentElement;
    return { x: r.x - c.x, y: r.y - c.y, w: r.width, h: r.height, cw: v.clientWidth, ch: v.clientHeight };
  }, id);

  /** The canvas's backing height, its clip box's height and what follows the clip box. */
  const sizes = (page) => page.evaluate(() => {
    const c = document.querySelector('canvas');
    const clip = c.parentElement.getBoundingClientRect();
    const below = document.querySelector('.canvas-wrap').nextElementSibling.getBoundingClientRect();
    // On a wide screen the legend stands beside the lanes, and a short
    // picture's row is as tall as the legend.
    const legend = document.querySelector('.timeline .legend')?.getBoundingClientRect();
    const beside = legend && legend.left >= clip.right ? legend.bottom : null;
    return { backing: c.height, rows: Math.round(clip.height * devicePixelRatio), clipBottom: clip.bottom, belowTop: below.top, legendBottom: beside };
  });

  test('timeline: a shorter picture keeps the canvas\'s backing store, and only its rows show', async ({ page }) => {
    await painted(page);
    await afterRun(page, () => page.selectOption('#f-preset', 'contention'));
    await painted(page);
    const tall = await sizes(page);
    await afterRun(page, () => page.selectOption('#f-preset', 'coconet'));
    await painted(page);
    const short = await sizes(page);
    assert(short.rows < tall.rows, `coconet's picture is not shorter: ${JSON.stringify({ tall, short })}`);
    assert(short.backing === tall.backing, `the backing store was reallocated: ${tall.backing} then ${short.backing} rows`);
    assert(short.backing >= short.rows, `the backing store is shorter than the picture: ${JSON.stringify(short)}`);
    // The rows below the picture are hidden: what follows sits right under
    // it, or under the legend beside it.
    const bottom = Math.max(short.clipBottom, short.legendBottom ?? -Infinity);
    assert(short.belowTop - bottom < 20, `space under the picture: ${JSON.stringify(short)}`);
    await canvasDrawn(page);
  });

  test('timeline: hovering the lanes of the run before names their bars as the run before\'s', async ({ page }) => {
    await painted(page);
    await afterRun(page, () => page.getByRole('switch', { name: 'TP overlap' }).click());
    await painted(page);
    const box = await page.locator('canvas').boundingBox();
    let tip = '';
    for (let y = 20; y < box.height && !/^Before the last change/.test(tip); y += 4) {
      for (const fx of [0.15, 0.3, 0.5, 0.7]) {
        await page.mouse.move(box.x + box.width * fx, box.y + y);
        tip = (await page.locator('.tooltip').count()) ? (await page.textContent('.tooltip')).trim() : '';
        if (/^Before the last change/.test(tip)) break;
      }
    }
    assert(/^Before the last change: .+ · .+/.test(tip) && /duration/.test(tip),
      `no bar of the before lanes named under the pointer: "${tip.slice(0, 120)}"`);
    const m = await mark(page, 'hover-outline');
    assert(m !== null && m.w > 0 && m.y >= -3 && m.y + m.h <= m.ch + 3, `the before bar has no outline: ${JSON.stringify(m)}`);
    await canvasDrawn(page);
  });

  test('timeline: hover marks the bar and its window over the canvas, without repainting it', async ({ page }) => {
    await painted(page);
    const before = await pixels(page);
    const box = await page.locator('canvas').boundingBox();
    let found = false;
    let tip = '';
    // A collective has a window: both marks show.
    for (let y = 30; y < 300 && !found; y += 3) {
      for (const fx of [0.2, 0.35, 0.5, 0.7, 0.9]) {
        await page.mouse.move(box.x + box.width * fx, box.y + y);
        tip = (await page.locator('.tooltip').count()) ? await page.textContent('.tooltip') : '';
        if (/window/i.test(tip) && (await mark(page, 'hover-window')) !== null) { found = true; break; }
      }
    }
    assert(found, 'no collective with a window found under the pointer');
    // The collective's tip names the NCCL kernel the model chose for it.
    assert(/NCCL algorithm, protocol\s*(Ring|Tree|NVLS), (LL128|LL|Simple)/.test(tip), `no NCCL kernel in the tip: ${tip}`);
    const outline = await page.waitForFunction(() => !document.getElementById('hover-outline')?.hidden);
    assert(outline, 'the hovered bar has no outline');
    for (const id of ['hover-outline', 'hover-window']) {
      const m = await mark(page, id);
      assert(m !== null && m.w > 0 && m.h > 0, `${id} is not shown: ${JSON.stringify(m)}`);
      assert(m.x >= -3 && m.y >= -3 && m.x + m.w <= m.cw + 3 && m.y + m.h <= m.ch + 3,
        `${id} lies outside the canvas: ${JSON.stringify(m)}`);
    }
    assert((await pixels(page)) === before, 'hovering repainted the canvas');
    await page.mouse.move(box.x + box.width / 2, box.y + box.height + 200);
    await page.waitForFunction(() => document.getElementById('hover-outline')?.hidden);
    assert((await mark(page, 'hover-window')) === null, 'the window mark stays after the pointer left');
    await canvasDrawn(page);
  });
}
