// Browser tests of the page's surface (issue 12, items 5-10): the embed
// code's height, the theme key, touch scrolling over the canvas, the phone's
// figure bar, the Tab order and skip links, slide exports and the table view.
// Registered by run.mjs (`registerSurfaceTests(...)`).

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ready, metric, afterRun, painted } from './harness.mjs';

/** Registers the tests; `h` carries run.mjs's helpers and paths. */
export function registerSurfaceTests(test, h) {
  const { assert, close, canvasDrawn, ARTIFACTS } = h;

  const base = (page) => page.url().split(/[?#]/)[0];
  async function goto(page, query) {
    await page.goto(base(page) + query);
    await ready(page);
    await painted(page);
  }
  /** Clicks `name` and returns the download's file name and bytes. */
  async function save(page, name) {
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name }).click(),
    ]);
    return { name: download.suggestedFilename(), bytes: readFileSync(await download.path()) };
  }
  async function copiedEmbed(page, context) {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(page.url()).origin });
    await page.getByRole('button', { name: 'Copy embed code' }).click();
    await page.waitForFunction(() => /Embed code copied/.test(document.querySelector('.copied')?.textContent ?? ''));
    return page.evaluate(() => navigator.clipboard.readText());
  }
  /** The colour of the canvas's top-left pixel (the background). */
  const cornerPixel = (frame) => frame.evaluate(() => {
    const c = document.querySelector('canvas');
    return [...c.getContext('2d').getImageData(2, 2, 1, 1).data.slice(0, 3)];
  });
  const LEGEND = ['TP', 'PP', 'DP', 'forward', 'backward', 'weight gradient (W)', 'recompute', 'optimizer',
    'exposed: compute waits (hatched)', 'window that can hide a collective'];

  test('surface: the embed code sizes its frame from the posted height, and its fallback clips nothing', async ({ page, context }) => {
    const snippet = await copiedEmbed(page, context);
    assert(/^<iframe src="[^"]+embed=1[^"]*"/.test(snippet), `embed code: ${snippet}`);
    assert(snippet.includes('<script>') && snippet.includes('overlap-lab:height'), 'the embed code has no height listener');
    const fallback = Number(snippet.match(/height="(\d+)"/)?.[1]);
    assert(fallback >= 640, `fallback height ${fallback}`);
    const origin = new URL(page.url()).origin;
    const frameOnly = snippet.split('<script>')[0];
    const host = (body) => `<!DOCTYPE html><html><body style="margin:0"><div style="width:640px">${body}</div></body></html>`;
    // Without its script (a host page that runs none): the fallback height must hold the whole page, legend included.
    await context.route(`${origin}/__surface-fallback.html`, (r) => r.fulfill({ contentType: 'text/html', body: host(frameOnly) }));
    await page.goto(`${origin}/__surface-fallback.html`);
    let frame = page.frames().find((f) => f !== page.mainFrame());
    await ready(frame);
    await painted(frame);
    await canvasDrawn(frame);
    const content = await frame.evaluate(() => ({
      embed: Math.ceil(document.querySelector('.embed').getBoundingClientRect().bottom),
      legend: Math.ceil(document.querySelector('.legend').getBoundingClientRect().bottom),
    }));
    console.log(`     embed content ${content.embed} px tall at 640 px, legend ends at ${content.legend}, fallback ${fallback}`);
    assert(content.legend <= fallback && content.embed <= fallback,
      `the fallback height ${fallback} clips the content (${content.embed} px, legend to ${content.legend})`);
    // With its script: the frame takes the height the page posts.
    await context.route(`${origin}/__surface-embed.html`, (r) => r.fulfill({ contentType: 'text/html', body: host(snippet) }));
    await page.goto(`${origin}/__surface-embed.html`);
    frame = page.frames().find((f) => f !== page.mainFrame());
    await ready(frame);
    await painted(frame);
    await page.waitForFunction(() => {
      const f = document.querySelector('iframe');
      return f.style.height !== '' && f.getBoundingClientRect().height > 200;
    }, null, { timeout: 30000 });
    const inner = await frame.evaluate(() => Math.ceil(document.querySelector('.embed').getBoundingClientRect().bottom));
    const outer = await page.evaluate(() => document.querySelector('iframe').getBoundingClientRect().height);
    assert(Math.abs(outer - inner) <= 2, `the frame is ${outer} px tall, its content ${inner} px`);
    await page.screenshot({ path: join(ARTIFACTS, 'surface-embed-snippet.png'), fullPage: true });
  });

  test('surface: theme=dark fixes the page, its embed code and its exports; exports are light by default', async ({ page, context }) => {
    // The reader's system is dark, the link says light: light wins, on the page and in an embed.
    await page.emulateMedia({ colorScheme: 'dark' });
    await goto(page, '?v=1&theme=light&embed=1');
    assert(close((await cornerPixel(page))[0], 255), `embed with theme=light paints ${await cornerPixel(page)}`);
    // Without a theme the page follows the system (dark) but the exports are light.
    await goto(page, '?v=1');
    const dark = await cornerPixel(page);
    assert(dark[0] < 60, `a dark system gives a light canvas: ${dark}`);
    let svg = (await save(page, 'Download SVG')).bytes.toString('utf8');
    assert(/<\/defs>\s*<rect [^>]*fill="#ffffff"/.test(svg), 'the SVG export is not light by default');
    // theme=dark on a light system.
    await page.emulateMedia({ colorScheme: 'light' });
    await goto(page, '?v=1&theme=dark');
    assert((await page.evaluate(() => document.documentElement.dataset.theme)) === 'dark', 'no data-theme');
    assert((await cornerPixel(page))[0] < 60, `theme=dark paints ${await cornerPixel(page)}`);
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert(bg === 'rgb(21, 24, 29)', `the page background is ${bg}`);
    svg = (await save(page, 'Download SVG')).bytes.toString('utf8');
    assert(/<\/defs>\s*<rect [^>]*fill="#15181d"/.test(svg), 'the SVG export ignores theme=dark');
    const snippet = await copiedEmbed(page, context);
    assert(/theme=dark/.test(snippet), `the embed code drops the theme: ${snippet}`);
    assert((await page.evaluate(() => location.search)).includes('theme=dark'), 'the address drops the theme');
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.screenshot({ path: join(ARTIFACTS, 'surface-dark-1440x900.png') });
    // The picker changes it back, and the exports follow.
    await page.selectOption('.theme-pick select', 'light');
    assert((await page.evaluate(() => document.documentElement.dataset.theme)) === 'light', 'the picker did not apply');
    await page.waitForFunction(() => location.search.includes('theme=light'));
    svg = (await save(page, 'Download SVG')).bytes.toString('utf8');
    assert(/<\/defs>\s*<rect [^>]*fill="#ffffff"/.test(svg), 'the SVG export ignores the picked theme');
    // A bad value is named with what is valid.
    await goto(page, '?v=1&theme=sepia');
    const alert = await page.textContent('.link-errors li[data-field="theme"]');
    assert(/light or dark/.test(alert), `theme=sepia: ${alert}`);
  });

  test('surface: vertical swipes over the canvas scroll the page (touch-action pan-y), embedded too', async ({ page }) => {
    for (const query of ['?v=1', '?v=1&embed=1']) {
      await goto(page, query);
      const touch = await page.evaluate(() => getComputedStyle(document.querySelector('canvas')).touchAction);
      assert(touch === 'pan-y', `${query}: the canvas has touch-action ${touch}`);
    }
  });

  test('surface: at 375 px a switch and its effect are on screen together', async ({ page }) => {
    const sw = page.getByRole('switch', { name: 'TP overlap' });
    await sw.evaluate((el) => el.scrollIntoView({ block: 'center' }));
    await afterRun(page, () => sw.click());
    await painted(page);
    const step = await metric(page, 'step_time_ms');
    const seen = await page.evaluate(() => {
      const inView = (el) => {
        const r = el.getBoundingClientRect();
        return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight;
      };
      const bar = document.querySelector('.sticky-figures');
      const toggle = document.querySelector('#f-overlap-tp');
      const tr = toggle.getBoundingClientRect();
      const br = bar.getBoundingClientRect();
      return {
        bar: inView(bar), toggle: inView(toggle), covered: tr.bottom > br.top,
        value: Number(bar.querySelector('[data-sticky="step"]').dataset.value),
        text: bar.textContent, tracks: bar.querySelectorAll('.sf-track').length,
      };
    });
    assert(seen.toggle && !seen.covered, 'the switch is not in view, or the bar covers it');
    assert(seen.bar, 'the figure bar is not on screen');
    assert(close(seen.value, step), `the bar shows ${seen.value}, the step is ${step}`);
    assert(/was /.test(seen.text) && seen.tracks === 2, `the bar lacks the change: ${seen.text}`);
    await page.screenshot({ path: join(ARTIFACTS, 'surface-phone-after-toggle-375x700.png') });
    // Where the figures sit beside the controls, there is no bar.
    await page.setViewportSize({ width: 1440, height: 900 });
    const shown = await page.evaluate(() => getComputedStyle(document.querySelector('.sticky-figures')).display);
    assert(shown === 'none', `the bar shows at 1440 px: ${shown}`);
  }, { viewport: { width: 375, height: 700 } });

  test('surface: Tab reaches the timeline in 12 presses or fewer; skip links go to the timeline and the figures', async ({ page }) => {
    const focused = () => page.evaluate(() => {
      const e = document.activeElement;
      return { tag: e.tagName, text: e.textContent.trim(), headline: e.matches('.headline'), top: e.getBoundingClientRect().top };
    });
    let presses = 0;
    for (; presses < 12; presses++) {
      if ((await focused()).tag === 'CANVAS') break;
      await page.keyboard.press('Tab');
    }
    assert((await focused()).tag === 'CANVAS', 'twelve presses of Tab did not reach the timeline');
    console.log(`     ${presses} presses of Tab reach the timeline`);
    const search = await page.evaluate(() => location.search);
    await goto(page, search);
    await page.keyboard.press('Tab');
    let f = await focused();
    assert(f.text === 'Skip to the timeline' && f.top >= 0, `first Tab stop: ${JSON.stringify(f)}`);
    await page.screenshot({ path: join(ARTIFACTS, 'surface-skip-link-1440x900.png') });
    await page.keyboard.press('Enter');
    assert((await focused()).tag === 'CANVAS', 'the skip link did not focus the timeline');
    await goto(page, search);
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    f = await focused();
    assert(f.text === 'Skip to the figures', `second Tab stop: ${JSON.stringify(f)}`);
    await page.keyboard.press('Enter');
    assert((await focused()).headline, 'the skip link did not focus the figures');
    assert((await page.evaluate(() => location.hash)) === '', 'a skip link changed the address');
    await page.screenshot({ path: join(ARTIFACTS, 'surface-1440x900.png') });
  }, { viewport: { width: 1440, height: 900 } });

  /** Lays an exported SVG into the page and measures its texts with the real font. */
  const measureSvg = (page, text) => page.evaluate((svgText) => {
    const doc = new DOMParser().parseFromString(svgText, 'image/svg+xml');
    const svg = document.importNode(doc.documentElement, true);
    svg.style.position = 'absolute';
    svg.style.left = '0';
    svg.style.top = '0';
    document.body.appendChild(svg);
    const texts = [...svg.querySelectorAll('text')].map((t) => {
      const box = t.getBBox();
      const nested = t.parentNode.nodeName === 'svg' && t.parentNode !== svg ? t.parentNode : null;
      const dx = nested ? Number(nested.getAttribute('x')) : 0;
      const dy = nested ? Number(nested.getAttribute('y')) : 0;
      return {
        text: t.textContent, x0: box.x + dx, x1: box.x + box.width + dx, y: Number(t.getAttribute('y')) + dy,
        clip: nested ? { x0: dx, x1: dx + Number(nested.getAttribute('width')) } : null,
      };
    });
    const hatches = [...svg.querySelectorAll('rect[fill="url(#exposed)"]')].map((r) => ({
      x0: Number(r.getAttribute('x')), x1: Number(r.getAttribute('x')) + Number(r.getAttribute('width')),
      y0: Number(r.getAttribute('y')), y1: Number(r.getAttribute('y')) + Number(r.getAttribute('height')),
    }));
    svg.remove();
    return { texts, hatches, width: Number(svg.getAttribute('width')), height: Number(svg.getAttribute('height')) };
  }, text);

  /** Tick labels never overlap; bar labels are whole and clear of hatching (measured with the page's font). */
  function checkSvgText(m, where) {
    const ticks = m.texts.filter((t) => /^-?[\d.]+ (s|ms|µs)$/.test(t.text));
    assert(ticks.length >= 2, `${where}: ${ticks.length} tick labels`);
    const rows = new Map();
    for (const t of ticks) rows.set(t.y, [...(rows.get(t.y) ?? []), t]);
    for (const row of rows.values()) {
      row.sort((a, b) => a.x0 - b.x0);
      for (let i = 1; i < row.length; i++) {
        assert(row[i - 1].x1 <= row[i].x0, `${where}: "${row[i - 1].text}" reaches "${row[i].text}"`);
      }
    }
    let labels = 0;
    for (const t of m.texts.filter((x) => x.clip)) {
      if (t.text.startsWith('Didactic') || t.y < 20) continue; // the caption
      labels++;
      assert(t.x1 <= t.clip.x1 + 0.5, `${where}: "${t.text}" is cut at its bar's end`);
      for (const h of m.hatches) {
        if (t.y < h.y0 || t.y > h.y1) continue;
        assert(t.x1 <= h.x0 + 0.5 || t.x0 >= h.x1 - 0.5, `${where}: "${t.text}" crosses hatching`);
      }
    }
    return labels;
  }

  test('surface: the SVG and PNG for slides carry a caption and a legend; text never collides or crosses hatching', async ({ page }) => {
    await painted(page);
    const svgFile = await save(page, 'Download SVG');
    const svg = svgFile.bytes.toString('utf8');
    writeFileSync(join(ARTIFACTS, 'surface-export.svg'), svg);
    const m = await measureSvg(page, svg);
    const words = m.texts.map((t) => t.text);
    const caption = m.texts[0].text;
    const preset = (await page.$eval('#f-preset', (s) => s.selectedOptions[0].textContent)).trim();
    const stepShown = (await page.textContent('[data-metric="step_time_ms"][data-run="current"]')).trim();
    assert(preset.startsWith(caption.split(' · ')[0]) && caption.includes(stepShown) && caption.includes('TP '),
      `caption "${caption}" (preset "${preset}", step "${stepShown}")`);
    for (const w of LEGEND) assert(words.includes(w), `the legend lacks "${w}"`);
    assert(/<\/defs>\s*<rect [^>]*fill="#ffffff"/.test(svg), 'the SVG is not light');
    checkSvgText(m, 'Fit');
    const png = await save(page, 'Download PNG');
    writeFileSync(join(ARTIFACTS, 'surface-export.png'), png.bytes);
    const pngWidth = png.bytes.readUInt32BE(16);
    const pngHeight = png.bytes.readUInt32BE(20);
    assert(Math.abs(pngWidth - m.width * 2) <= 2 && Math.abs(pngHeight - m.height * 2) <= 2,
      `the PNG is ${pngWidth}x${pngHeight}, the slide ${m.width}x${m.height}`);
    // Deep in the step: long tick labels, and bars wide enough for names beside their hatching.
    let labels = 0;
    for (const [zoomIns, pans] of [[6, 9], [14, 3], [30, 5], [45, 9]]) {
      await page.getByRole('button', { name: 'Fit' }).click();
      await page.focus('canvas');
      for (let i = 0; i < zoomIns; i++) await page.keyboard.press('+');
      for (let i = 0; i < pans; i++) await page.keyboard.press('ArrowRight');
      const deep = (await save(page, 'Download SVG')).bytes.toString('utf8');
      labels += checkSvgText(await measureSvg(page, deep), `${zoomIns} zoom steps`);
      if (zoomIns === 14) writeFileSync(join(ARTIFACTS, 'surface-export-zoomed.svg'), deep);
    }
    assert(labels > 0, 'no bar label was checked');
  }, { viewport: { width: 1440, height: 900 } });

  test('surface: the table follows the zoom, filters by GPU, lane and kind, and pages', async ({ page }) => {
    await painted(page);
    await page.click('.table-view summary');
    const status = () => page.textContent('.table-status');
    const parse = async () => {
      const s = await status();
      const m = s.match(/Rows (\d+) to (\d+) of (\d+) operations in view \(page (\d+) of (\d+)\)/);
      assert(m, `status: ${s}`);
      const [, first, last, total, pageNo, pages] = m.map(Number);
      return { first, last, total, pageNo, pages, rows: await page.locator('.table-view tbody tr').count() };
    };
    await page.waitForFunction(() => /Rows 1 to/.test(document.querySelector('.table-status')?.textContent ?? ''));
    const all = await parse();
    assert(all.total > 400 && all.pages >= 3 && all.rows === all.last - all.first + 1, `first page: ${JSON.stringify(all)}`);
    // The last page holds the rest: nothing is cut at 400.
    while ((await parse()).pageNo < all.pages) await page.getByRole('button', { name: 'Next page' }).click();
    const last = await parse();
    assert(last.last === all.total && last.rows === all.total - (all.pages - 1) * (all.last), `last page: ${JSON.stringify(last)}`);
    const cells = (col) => page.$$eval('.table-view tbody tr', (trs, c) => trs.map((tr) => tr.children[c].textContent), col);
    // Lane, then kind, then GPU.
    await page.selectOption('[data-filter="lane"]', { label: 'TP' });
    const tp = await parse();
    assert(tp.total > 0 && tp.total < all.total && tp.pageNo === 1, `TP lane: ${JSON.stringify(tp)}`);
    assert((await cells(1)).every((c) => c === 'TP'), 'the lane filter lets other lanes through');
    const kindLabel = await page.$eval('[data-filter="kind"]', (s) => s.options[1].textContent);
    await page.selectOption('[data-filter="kind"]', { index: 1 });
    const kind = await parse();
    assert(kind.total > 0 && kind.total <= tp.total, `kind: ${JSON.stringify(kind)}`);
    assert((await cells(2)).every((c) => c === kindLabel), `the kind filter lets other kinds through than ${kindLabel}`);
    const gpuLabel = await page.$eval('[data-filter="gpu"]', (s) => s.options[2].textContent);
    await page.selectOption('[data-filter="gpu"]', { index: 2 });
    const gpu = await parse();
    const rank = gpuLabel.match(/GPU (\d+)/)[1];
    assert(gpu.total > 0 && gpu.total < kind.total, `GPU: ${JSON.stringify(gpu)}`);
    assert((await cells(0)).every((c) => c.startsWith(`${rank} `)), `the GPU filter lets other GPUs through than ${rank}`);
    await page.screenshot({ path: join(ARTIFACTS, 'surface-table-1440x900.png'), fullPage: false });
    // Back to everything, then zoom: the table follows without being asked.
    await page.selectOption('[data-filter="gpu"]', 'all');
    await page.selectOption('[data-filter="lane"]', 'all');
    await page.waitForFunction((n) => document.querySelector('.table-status').textContent.includes(`of ${n} operations`), all.total);
    await page.getByRole('button', { name: 'Zoom in' }).click();
    await page.getByRole('button', { name: 'Zoom in' }).click();
    await page.waitForFunction((n) => {
      const m = document.querySelector('.table-status').textContent.match(/of (\d+) operations/);
      return m && Number(m[1]) < n / 2;
    }, all.total, { timeout: 5000 }).catch(() => {});
    const zoomed = await parse();
    assert(zoomed.total < all.total / 2, `zoomed to a quarter, the table lists ${zoomed.total} of ${all.total}`);
    await page.getByRole('button', { name: 'Fit' }).click();
    await page.waitForFunction((n) => document.querySelector('.table-status').textContent.includes(`of ${n} operations`), all.total, { timeout: 5000 });
  }, { viewport: { width: 1440, height: 900 } });

  for (const viewport of [{ width: 1440, height: 900 }, { width: 375, height: 700 }]) {
    test(`surface: screenshots at ${viewport.width}x${viewport.height}, light and dark`, async ({ page }) => {
      await painted(page);
      await page.screenshot({ path: join(ARTIFACTS, `surface-light-${viewport.width}x${viewport.height}.png`) });
      await page.screenshot({ path: join(ARTIFACTS, `surface-light-${viewport.width}x${viewport.height}-full.png`), fullPage: true });
      await goto(page, '?v=1&theme=dark');
      await page.screenshot({ path: join(ARTIFACTS, `surface-dark-${viewport.width}x${viewport.height}-full.png`), fullPage: true });
    }, { viewport });
  }
}
