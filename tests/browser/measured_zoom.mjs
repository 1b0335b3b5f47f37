// Browser tests of the measured view's one time axis (src/ui/measured.rs,
// overlap_view::time_window): HTA's two committed ranks of a 128-GPU job
// (tests/data/hta/all_to_all) opened in the page show a lane per rank and
// stream, each rank's wait for the other striped over its collectives;
// the keys and the buttons zoom and pan the measured and simulated sides
// together; on a desktop and on a phone. Registered by run.mjs.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { painted } from './harness.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const HTA = join(ROOT, 'tests', 'data', 'hta', 'all_to_all');
const FILES = ['sampled_rank-0.json.gz', 'sampled_rank-1.json.gz'];

/** Registers the tests; `h` carries run.mjs's helpers and paths. */
export function registerMeasuredZoomTests(test, h) {
  const { assert, CLI, ARTIFACTS } = h;

  /** The window shown: null for the whole step, else [from, to] seconds. */
  async function windowOf(page) {
    const w = await page.getAttribute('.measured-canvas', 'data-window');
    return w === 'full' ? null : w.split(' ').map(Number);
  }

  async function until(page, pred, what) {
    for (let i = 0; i < 100; i++) {
      if (await pred()) return;
      await page.waitForTimeout(50);
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  for (const [w, hgt, tag] of [[1440, 900, '1440'], [390, 844, '390']]) {
    test(`measured view: two ranks' lanes, their wait striped, zoomed and panned on one axis at ${w}x${hgt}`, async ({ page }) => {
      await painted(page);
      const cli = JSON.parse(execFileSync(CLI, ['import', '--json', HTA], { encoding: 'utf8' }));
      await page.setInputFiles('.trace-file', FILES.map((name) => ({
        name, mimeType: 'application/gzip', buffer: readFileSync(join(HTA, name)),
      })));
      await page.waitForSelector('body[data-import="shown"]');
      const step = Number(await page.getAttribute('.measured', 'data-measured-step-ms'));
      assert(step === cli.over_ranks.step_ms, `page step ${step}, CLI ${cli.over_ranks.step_ms}`);
      const canvas = page.locator('.measured-canvas');
      // A lane per rank and stream: both ranks' streams.
      const lanes = Number(await canvas.getAttribute('data-lanes'));
      assert(lanes >= 4, `${lanes} lanes`);
      const waitsFull = Number(await canvas.getAttribute('data-wait-spans'));
      assert(waitsFull > 0, `no wait striped on the whole step (${waitsFull})`);
      assert((await windowOf(page)) === null, 'a new trace shows its whole step');
      // The canvas fits the screen.
      const box = await canvas.boundingBox();
      assert(box.x >= 0 && box.x + box.width <= w + 0.5, `the picture spills: ${JSON.stringify(box)}`);
      await page.locator('.measured').screenshot({ path: join(ARTIFACTS, `measured-full-${tag}.png`) });

      // Keys: two zooms in, about the middle, then a pan a quarter later.
      await page.locator('.measured-picture').focus();
      await page.keyboard.press('+');
      await page.keyboard.press('+');
      await until(page, async () => (await windowOf(page)) !== null, 'the zoom');
      const z = await windowOf(page);
      assert(z[0] > 0 && z[1] > z[0], `zoomed to ${z}`);
      const width = z[1] - z[0];
      // Two zooms of 2: a quarter of the axis, centred on its middle.
      const full = 2 * (z[0] + width / 2);
      assert(Math.abs(width - full / 4) < 1e-9 * full, `width ${width} of ${full}`);
      await page.keyboard.press('ArrowRight');
      await until(page, async () => (await windowOf(page))[0] > z[0], 'the pan');
      const p = await windowOf(page);
      assert(Math.abs(p[0] - z[0] - width / 4) < 1e-9 * full, `panned from ${z} to ${p}`);
      // Panned left past the start: the window stops there, at the first
      // collectives, where both ranks waited for each other.
      for (let i = 0; i < 8; i++) await page.keyboard.press('ArrowLeft');
      await until(page, async () => (await windowOf(page))[0] === 0, 'the pan to the start');
      // Buttons do the same: one more zoom in by the button.
      await page.locator('.measured-zoom').getByRole('button', { name: 'Zoom the trace in' }).click();
      await until(page, async () => { const q = await windowOf(page); return q[1] - q[0] < width * 0.6; }, 'the button zoom');
      const q = await windowOf(page);
      assert(Math.abs(q[0] - width / 4) < 1e-9 * full && Math.abs(q[1] - q[0] - width / 2) < 1e-9 * full,
        `zoomed by the button to ${q}`);
      const waitsZoomed = Number(await canvas.getAttribute('data-wait-spans'));
      assert(waitsZoomed > 0, 'no wait striped in the zoomed window');
      await page.locator('.measured').screenshot({ path: join(ARTIFACTS, `measured-zoomed-${tag}.png`) });
      await page.locator('.measured-zoom').getByRole('button', { name: 'Earlier in the trace' }).click();
      await page.locator('.measured-zoom').getByRole('button', { name: 'Whole step' }).click();
      await until(page, async () => (await windowOf(page)) === null, 'the whole step again');
    }, { viewport: { width: w, height: hgt } });
  }
}
