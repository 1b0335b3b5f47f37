// Browser tests of scale and memory: the 1T preset driven as an engineer
// would (an overlap switch, its figures ahead of the timeline, a slider
// dragged, the trace download) and the memory bar (src/ui/memory_bar.rs).
// Registered by run.mjs (`registerScaleTests(...)`). Every wait ends in
// "finished or refused", never in a timing.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterRun, painted, runSeq, whenShown } from './harness.mjs';

/** The memory report's fields, as `data-metric` names them. */
const MEMORY_PARTS = ['weights', 'gradients', 'optimizer', 'activations'];
const MEMORY_FIGURES = [...MEMORY_PARTS, 'total', 'capacity'];

/** Registers the tests; `h` carries run.mjs's helpers and paths. */
export function registerScaleTests(test, h) {
  const { assert, close, canvasDrawn, matchesCli, cliReport, ARTIFACTS } = h;

  const scenarioJson = (page) => page.getAttribute('[data-scenario-json]', 'data-scenario-json');

  /** The memory bar's figures and segment widths as the page shows them. */
  async function memoryBar(page) {
    return page.evaluate((names) => {
      const figures = {};
      for (const n of names) {
        const el = document.querySelector(`.memory [data-metric="memory_gb.${n}"][data-run="current"]`);
        figures[n] = el ? Number(el.dataset.value) : null;
      }
      const bar = document.querySelector('.memory .mem-bar');
      const width = bar.getBoundingClientRect().width;
      const segments = [...bar.querySelectorAll('.mem-seg')].map((s) => s.getBoundingClientRect().width / width);
      const warning = document.querySelector('.memory .memory-warning')?.textContent ?? null;
      return { figures, segments, warning, fits: document.querySelector('.memory').dataset.fits };
    }, MEMORY_FIGURES);
  }

  /** Checks the bar against the CLI's `memory_gb` for the page's own scenario. */
  async function barMatchesCli(page) {
    const want = cliReport(await scenarioJson(page)).memory_gb;
    const shown = await memoryBar(page);
    for (const n of MEMORY_FIGURES) {
      assert(close(shown.figures[n], want[n]), `memory_gb.${n}: page shows ${shown.figures[n]}, CLI says ${want[n]}`);
    }
    assert(shown.fits === String(want.fits), `the bar says fits=${shown.fits}, the CLI ${want.fits}`);
    // Each segment's share of the bar is its share of the larger of total and capacity.
    const scale = Math.max(want.total, want.capacity);
    assert(shown.segments.length === 4, `${shown.segments.length} segments`);
    MEMORY_PARTS.forEach((n, i) => {
      assert(Math.abs(shown.segments[i] - want[n] / scale) < 0.01,
        `${n}: segment ${shown.segments[i].toFixed(3)} of the bar, expected ${(want[n] / scale).toFixed(3)}`);
    });
    return { want, shown };
  }

  /** A scenario that does not fit: the one-queue preset on GPUs of 32 GB. */
  async function overflow(page) {
    await afterRun(page, () => page.selectOption('#f-preset', 'one-queue'));
    await afterRun(page, () => page.locator('#f-hardware-hbm-gb').fill('32'));
  }

  test('scale: the memory bar shows the CLI\'s memory_gb; a scenario that does not fit is warned about', async ({ page }) => {
    await painted(page);
    const { want, shown } = await barMatchesCli(page);
    assert(want.fits && shown.warning === null, `a scenario that fits is warned about: ${shown.warning}`);
    // one-queue's 46.8 GB on a 32 GB GPU.
    await overflow(page);
    const over = await barMatchesCli(page);
    assert(!over.want.fits, 'one-queue fits in 32 GB: pick another scenario for this test');
    const text = over.shown.warning;
    assert(text && /Does not fit/.test(text), `no warning for a scenario that does not fit: ${text}`);
    const parts = { weights: 'weights', gradients: 'gradients', optimizer: 'optimizer states', activations: 'activations' };
    const biggest = MEMORY_PARTS.reduce((a, b) => (over.want[b] > over.want[a] ? b : a));
    assert(text.includes(`biggest part is the ${parts[biggest]}, ${over.want[biggest].toFixed(1)} GB`),
      `the warning does not name the biggest part (${biggest}): ${text}`);
    assert(text.includes(`${over.want.total.toFixed(1)} GB against its ${over.want.capacity.toFixed(1)} GB`),
      `the warning's total is not the CLI's: ${text}`);
    assert(/shard|TP or PP|[Rr]ecomput/.test(text), `the warning says nothing that would shrink it: ${text}`);
    await matchesCli(page);
    await page.locator('.memory').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(ARTIFACTS, 'memory-bar-1440.png') });
    // Back to a scenario that fits: the warning goes.
    await afterRun(page, () => page.selectOption('#f-preset', 'didactic'));
    const back = await memoryBar(page);
    assert(back.warning === null, `the warning stayed: ${back.warning}`);
  }, { viewport: { width: 1440, height: 900 } });

  for (const [name, options] of [
    ['375 px, light', { viewport: { width: 375, height: 700 } }],
    ['375 px, dark', { viewport: { width: 375, height: 700 }, colorScheme: 'dark' }],
  ]) {
    test(`scale: the memory bar and its warning read at ${name}`, async ({ page }) => {
      await overflow(page);
      await barMatchesCli(page);
      const box = await page.evaluate(() => {
        const r = (s) => document.querySelector(s).getBoundingClientRect();
        return { bar: r('.memory .mem-bar'), warning: r('.memory .memory-warning'), page: document.documentElement.scrollWidth };
      });
      assert(box.page <= 376, `the page scrolls sideways (${box.page} px)`);
      assert(box.bar.width > 200 && box.bar.right <= 375, `the bar is ${box.bar.width} px wide, right edge ${box.bar.right}`);
      assert(box.warning.right <= 375, `the warning reaches ${box.warning.right} px`);
      // The parts' names and figures sit inside the screen.
      const legend = await page.$$eval('.memory .mem-part', (els) => els.map((e) => e.getBoundingClientRect().right));
      assert(legend.every((r) => r <= 375), `a legend entry reaches ${Math.max(...legend)} px`);
      await page.locator('.memory').scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(ARTIFACTS, `memory-bar-375-${options.colorScheme ?? 'light'}.png`) });
    }, options);
  }

  // Needs the faster engine: until then the page's time budget may stop this run.
  test('scale: switching TP overlap on 1T dims the old timeline under "Simulating", then shows the CLI figures', async ({ page }) => {
    await afterRun(page, () => page.selectOption('#f-preset', 'megatron-1t'));
    await painted(page);
    const sw = page.getByRole('switch', { name: 'TP overlap' });
    if (await sw.isChecked()) await afterRun(page, () => sw.click());
    const before = await runSeq(page);
    // What the page shows while the run is in flight, read the moment the status appears.
    const seen = whenShown(page, '.sim-status.busy [role="status"]', (status) => ({
      status: status.textContent,
      opacity: Number(getComputedStyle(document.querySelector('.canvas-wrap')).opacity),
    }));
    await sw.click();
    const inFlight = await seen;
    assert(/Simulating/.test(inFlight.status), `status while in flight: ${inFlight.status}`);
    assert(inFlight.opacity < 1, `the previous timeline was not dimmed (opacity ${inFlight.opacity})`);
    await page.waitForFunction((n) => Number(document.body.dataset.runSeq) > n
      || document.body.dataset.errors === '1' || document.body.dataset.runAlert === '1', before, { timeout: 180000 });
    const why = await page.evaluate(() => (document.body.dataset.errors === '1'
      ? document.querySelector('.field-error.culprit, .field.invalid .field-error')?.textContent
      : document.body.dataset.runAlert === '1' ? document.querySelector('.run-alert')?.textContent : null));
    assert(why === null || why === undefined, `1T with TP overlap on did not show: ${why}`);
    assert(await sw.isChecked(), 'the TP overlap switch is not on');
    await matchesCli(page);
    await barMatchesCli(page);
    await painted(page);
    await canvasDrawn(page);
  }, { timeout: 300000 });

  test('scale: on a phone, switching TP overlap on 1T says "Simulating" in the figure bar beside the switch', async ({ page }) => {
    await afterRun(page, () => page.selectOption('#f-preset', 'megatron-1t'));
    await painted(page);
    const sw = page.getByRole('switch', { name: 'TP overlap' });
    if (await sw.isChecked()) await afterRun(page, () => sw.click());
    await sw.evaluate((e) => e.scrollIntoView({ block: 'center' }));
    const before = await runSeq(page);
    // The page's status sits above the timeline, off this screen: the bar must say it.
    const seen = whenShown(page, '.sticky-figures [data-sticky="busy"]', (busy) => {
      const r = busy.getBoundingClientRect();
      const status = document.querySelector('.sim-status [role="status"]').getBoundingClientRect();
      return {
        text: busy.textContent, top: r.top, bottom: r.bottom, statusTop: status.top, statusBottom: status.bottom,
        stale: document.querySelector('.sticky-figures').classList.contains('stale'),
        opacity: Number(getComputedStyle(document.querySelector('.sticky-figures .sf-line')).opacity),
      };
    });
    await sw.click();
    const inFlight = await seen;
    // The switches come first on a phone: the status, above the timeline, is below this screen.
    assert(inFlight.statusBottom < 0 || inFlight.statusTop > 700,
      `the page's own status is on screen here, pick another control: ${JSON.stringify(inFlight)}`);
    assert(/Simulating/.test(inFlight.text) && inFlight.top >= 0 && inFlight.bottom <= 700,
      `the bar does not say "Simulating" on screen: ${JSON.stringify(inFlight)}`);
    assert(inFlight.stale && inFlight.opacity < 1, `the previous figures were not dimmed: ${JSON.stringify(inFlight)}`);
    await page.screenshot({ path: join(ARTIFACTS, 'scale-phone-simulating-375x700.png') });
    await page.waitForFunction((n) => Number(document.body.dataset.runSeq) > n, before, { timeout: 180000 });
    // The figures may come first: the bar then says the timeline is still on its way.
    const ahead = await page.evaluate(() => document.querySelector('.sticky-figures [data-sticky="busy"]')?.textContent ?? null);
    assert(ahead === null || /Simulating the timeline/.test(ahead), `with the new figures shown the bar says: ${ahead}`);
    await page.waitForFunction(() => !document.querySelector('.sim-status.busy'), null, { timeout: 180000 });
    const after = await page.evaluate(() => ({
      busy: document.querySelector('.sticky-figures [data-sticky="busy"]') !== null,
      stale: document.querySelector('.sticky-figures').classList.contains('stale'),
      bar: Number(document.querySelector('[data-sticky="step"]').dataset.value),
      headline: Number(document.querySelector('[data-metric="step_time_ms"][data-run="current"]').dataset.value),
    }));
    assert(!after.busy && !after.stale, `the bar still says it is simulating: ${JSON.stringify(after)}`);
    assert(close(after.bar, after.headline), `the bar shows ${after.bar}, the figures ${after.headline}`);
    await matchesCli(page);
  }, { viewport: { width: 375, height: 700 }, timeout: 300000 });

  test('scale: on 1T the figures come before the timeline, dimmed under "Simulating", and equal the CLI\'s', async ({ page }) => {
    await afterRun(page, () => page.selectOption('#f-preset', 'megatron-1t'));
    await painted(page);
    const sw = page.getByRole('switch', { name: 'TP overlap' });
    if (await sw.isChecked()) {
      await afterRun(page, () => sw.click());
      await painted(page);
    }
    // Everything the page shows the moment the new figures appear.
    const first = page.evaluate((before) => new Promise((resolve) => {
      const look = () => {
        const b = document.body.dataset;
        if (Number(b.runSeq) <= before) return false;
        resolve({
          ahead: b.figuresAhead,
          seq: b.runSeq,
          paintedSeq: document.querySelector('canvas').dataset.paintedSeq,
          status: document.querySelector('.sim-status.busy [role="status"]')?.textContent ?? null,
          opacity: Number(getComputedStyle(document.querySelector('.canvas-wrap')).opacity),
          json: document.querySelector('[data-scenario-json]').dataset.scenarioJson,
          runs: JSON.parse(b.workerRuns ?? '{}'),
          cores: navigator.hardwareConcurrency,
          figures: [...document.querySelectorAll('[data-metric][data-run="current"]')]
            .map((e) => [e.dataset.metric, Number(e.dataset.value)]),
        });
        return true;
      };
      const ob = new MutationObserver(() => { if (look()) ob.disconnect(); });
      ob.observe(document.body, { attributes: true, attributeFilter: ['data-run-seq'] });
    }), await runSeq(page));
    await sw.click();
    const seen = await first;
    assert(seen.ahead === '1', `the figures did not come ahead of the timeline (figures-ahead=${seen.ahead})`);
    assert(seen.paintedSeq !== seen.seq, 'the new timeline was already painted when its figures appeared');
    assert(/Simulating/.test(seen.status ?? ''), `status while the timeline is computed: ${seen.status}`);
    assert(seen.opacity < 1, `the previous timeline was not dimmed (opacity ${seen.opacity})`);
    assert(JSON.parse(seen.json).overlap.tp === true, `the figures are not those of TP overlap on: ${seen.json}`);
    // These figures are one run: the all-off baseline is the preset's own
    // step, remembered, and the one short run that marks its periods stands
    // for three; there is nothing to share with the helper worker.
    assert(seen.runs.one_run >= 1 && seen.runs.shared === 0,
      `the figures were not made of one run: ${JSON.stringify(seen.runs)}`);
    await page.screenshot({ path: join(ARTIFACTS, 'scale-1t-figures-first.png') });
    const want = cliReport(seen.json);
    assert(seen.figures.length >= 20, `only ${seen.figures.length} figures on the page`);
    const at = (obj, path) => path.split('.').reduce((o, k) => (o == null ? undefined : o[k]), obj);
    for (const [name, value] of seen.figures) {
      assert(typeof at(want, name) === 'number', `the CLI report has no ${name}`);
      assert(close(value, at(want, name)), `${name} shown first: ${value}, CLI says ${at(want, name)}`);
    }
    // Then the timeline: the figures stay the CLI's, the status goes.
    await page.waitForFunction((seq) => document.querySelector('canvas').dataset.paintedSeq === seq
      || document.body.dataset.runAlert === '1', seen.seq, { timeout: 180000 });
    const alert = await page.evaluate(() => (document.body.dataset.runAlert === '1'
      ? document.querySelector('.run-alert')?.textContent : null));
    assert(alert === null, `the timeline did not show: ${alert}`);
    assert(await page.evaluate(() => document.body.dataset.figuresAhead) === '0', 'still marked ahead of the timeline');
    await matchesCli(page);
    await canvasDrawn(page);
  }, { timeout: 300000 });

  test('scale: a 1T link with every overlap on shares its baseline\'s run with the helper worker and shows the CLI\'s figures', async ({ page }) => {
    await page.waitForFunction(() => document.querySelector('[data-metric="step_time_ms"][data-run="current"]'),
      null, { timeout: 180000 });
    const runs = await page.evaluate(() => ({
      runs: JSON.parse(document.body.dataset.workerRuns ?? '{}'),
      cores: navigator.hardwareConcurrency,
      json: document.querySelector('[data-scenario-json]').dataset.scenarioJson,
    }));
    const s = JSON.parse(runs.json);
    assert(s.overlap.tp && s.overlap.pp && s.overlap.dp, `opened ${runs.json}`);
    // Two runs, the scenario's and its baseline's: over two workers when
    // the machine has two cores.
    if (runs.cores >= 2) {
      assert(runs.runs.shared >= 1, `the figures were not shared with the helper worker: ${JSON.stringify(runs.runs)}`);
    }
    await matchesCli(page);
  }, { timeout: 300000, query: '?v=1&preset=megatron-1t&tp_overlap=1&pp_overlap=1&dp_overlap=1' });

  test('scale: a slider dragged on 1T starts no queue of stale runs in the worker', async ({ page }) => {
    await afterRun(page, () => page.selectOption('#f-preset', 'megatron-1t'));
    await painted(page);
    const runs = () => page.evaluate(() => JSON.parse(document.body.dataset.workerRuns ?? '{}'));
    const before = await runs();
    const seq = await runSeq(page);
    // A drag: twenty values over about a second, the last one 37.
    await page.evaluate(() => new Promise((resolve) => {
      const slider = document.querySelector('input[aria-label="DP bucket size (slider)"]');
      let v = 0;
      const step = () => {
        v += 1;
        slider.value = String(v < 20 ? 10 + 2 * v : 37);
        slider.dispatchEvent(new Event('input', { bubbles: true }));
        if (v < 20) setTimeout(step, 50); else resolve();
      };
      step();
    }));
    await page.waitForFunction((n) => Number(document.body.dataset.runSeq) > n && document.body.dataset.simulating === '0',
      seq, { timeout: 240000 });
    const after = await runs();
    const d = (k) => (after[k] ?? 0) - (before[k] ?? 0);
    const counts = `started ${d('started')}, figures ${d('figures')}, timelines ${d('timelines')}, ` +
      `skipped ${d('skipped')}, stopped by the page ${d('stopped')}`;
    console.log(`    worker runs for a 20-value drag on 1T: ${counts}`);
    assert(d('started') <= 3, `the worker started ${d('started')} runs for one drag (${counts})`);
    assert(d('timelines') <= 2, `the worker computed ${d('timelines')} timelines for one drag (${counts})`);
    assert((await runSeq(page)) - seq <= 2, `${(await runSeq(page)) - seq} runs were shown for one drag`);
    const json = JSON.parse(await scenarioJson(page));
    assert(json.overlap.bucket_mb === 37, `the newest value was not the one simulated: ${JSON.stringify(json.overlap)}`);
    await matchesCli(page);
  }, { timeout: 300000 });

  test('scale: the 1T trace downloads as valid JSON, or the page says plainly why not with the CLI command', async ({ page }) => {
    await afterRun(page, () => page.selectOption('#f-preset', 'megatron-1t'));
    await painted(page);
    const download = page.waitForEvent('download', { timeout: 180000 }).then((d) => ({ d }));
    const refusal = page.waitForSelector('.trace-problem', { timeout: 180000 }).then((e) => ({ e }));
    await page.getByRole('button', { name: 'Download trace (JSON)' }).click();
    const first = await Promise.race([download, refusal]);
    download.catch(() => {});
    refusal.catch(() => {});
    if (first.d) {
      const text = readFileSync(await first.d.path(), 'utf8');
      assert(text.length > 0, 'the trace file is empty');
      const parsed = JSON.parse(text);
      assert(Array.isArray(parsed.traceEvents) && parsed.traceEvents.length > 100000,
        `the trace has ${parsed.traceEvents?.length} traceEvents`);
    } else {
      const why = await first.e.textContent();
      assert(/\d+ MB/.test(why) && /overlap-lab trace preset:megatron-1t/.test(why),
        `the refusal does not say why or give the command: ${why}`);
    }
    // The page still answers: a switch simulates and its figures are the CLI's.
    await afterRun(page, () => page.selectOption('#f-preset', 'megatron-145.6b'));
    await matchesCli(page);
  }, { timeout: 300000 });


  test('scale: a slide asked for while 1T\'s timeline is in flight waits for it, then captions the timeline it draws', async ({ page }) => {
    await afterRun(page, () => page.selectOption('#f-preset', 'megatron-1t'));
    await painted(page);
    const sw = page.getByRole('switch', { name: 'TP overlap' });
    assert(!(await sw.isChecked()), 'the preset starts with TP overlap off');
    // The new figures come ahead of the timeline: the one drawn is TP off's.
    await afterRun(page, () => sw.click());
    assert(await page.evaluate(() => document.body.dataset.simulating) === '1', 'the timeline came with the figures');
    const downloads = [];
    page.on('download', (d) => downloads.push(d));
    await page.getByRole('button', { name: 'Download SVG' }).click();
    const waits = await page.textContent('.export-waits');
    assert(/The SVG waits for the simulation in flight/.test(waits), waits);
    await painted(page);
    await page.waitForFunction(() => !document.querySelector('.export-waits'), null, { timeout: 10000 });
    assert(downloads.length === 0, 'a slide was saved while the timeline was the previous scenario\'s');
    const [svg] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download SVG' }).click()]);
    const text = readFileSync(await svg.path(), 'utf8');
    const step = (await page.textContent('[data-metric="step_time_ms"][data-run="current"]')).trim();
    const caption = /Megatron-LM 1T[^<]*/.exec(text)?.[0] ?? '';
    assert(caption.includes('overlap TP on') && caption.includes(`step ${step}`), `caption "${caption}" against the step ${step}`);
  }, { timeout: 180000 });


  test('scale: the timeline table follows 1T\'s timeline when it comes after the figures', async ({ page }) => {
    await afterRun(page, () => page.selectOption('#f-preset', 'megatron-1t'));
    await painted(page);
    await page.getByText('Timeline as a table').click();
    const operations = () => page.evaluate(() => {
      const text = document.querySelector('details:has(table)')?.innerText ?? '';
      return Number(/of (\d+) operations/.exec(text)?.[1] ?? NaN);
    });
    await page.waitForFunction(() => /of \d+ operations/.test(document.querySelector('details:has(table)')?.innerText ?? ''));
    const off = await operations();
    // TP overlap in four chunks: more operations in the step.
    await afterRun(page, () => page.getByRole('switch', { name: 'TP overlap' }).click());
    await painted(page);
    await page.waitForFunction((n) => {
      const m = /of (\d+) operations/.exec(document.querySelector('details:has(table)')?.innerText ?? '');
      return m && Number(m[1]) !== n;
    }, off, { timeout: 10000 }).catch(() => {});
    const on = await operations();
    assert(on > off, `the table still counts ${on} operations, the TP-off timeline's ${off}, under the TP-on timeline`);
  }, { timeout: 180000 });


  test('scale: a slide after a stopped 1T run names the scenario it draws, not the controls', async ({ page }) => {
    await afterRun(page, () => page.selectOption('#f-preset', 'megatron-1t'));
    await painted(page);
    const caption = async () => {
      const [svg] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download SVG' }).click()]);
      return /Megatron-LM 1T[^<]*/.exec(readFileSync(await svg.path(), 'utf8'))?.[0] ?? '';
    };
    const preset = await caption();
    assert(/^Megatron-LM 1T on 3072 A100 · .*overlap TP off/.test(preset), preset);
    // Switched, then stopped at once: the page keeps the TP-off step and
    // says so; its slide is that step's, named as the preset unchanged.
    await page.getByRole('switch', { name: 'TP overlap' }).click();
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.waitForFunction(() => document.body.dataset.simulating === '0');
    const stopped = await page.evaluate(() => document.body.dataset.runAlert === '1');
    const after = await caption();
    // Stopped: the TP-off step, unchanged. Finished first (a fast machine):
    // the TP-on step, changed from the preset. Either way the caption's mark
    // and switch agree with the step drawn.
    const expected = stopped ? /^Megatron-LM 1T on 3072 A100 · .*overlap TP off/ : /^Megatron-LM 1T on 3072 A100 \(modified\) · .*overlap TP on/;
    assert(expected.test(after), `${stopped ? 'stopped' : 'finished'}: ${after}`);
  }, { timeout: 180000 });

  /** The stages whose lanes the pointer finds, scanning the GPU rows top to bottom at `fx` of the canvas. */
  async function stagesUnderPointer(page, fx) {
    const box = await page.locator('canvas').boundingBox();
    const stages = new Set();
    for (let y = 24; y < box.height - 140; y += 5) {
      await page.mouse.move(box.x + box.width * fx, box.y + y);
      const tip = (await page.locator('.tooltip').count()) ? await page.textContent('.tooltip') : '';
      const m = /GPU\s*\d+ \(stage (\d+)\)/.exec(tip);
      if (m) stages.add(Number(m[1]));
    }
    await page.mouse.move(0, 0);
    return [...stages].sort((a, b) => a - b);
  }

  test('scale: a 1T link opens its zoom, link lanes and group of eight GPUs, drawn at full lane height', async ({ page }) => {
    // The figures of 1T come before its timeline: the link's view waits for
    // the timeline, so its zoom is a part of this step (not of the default
    // one) and its GPUs are among the 64 simulated.
    await page.goto(`${page.url().split('?')[0]}?v=1&preset=megatron-1t&gpus=8-15&zoom=0.25-0.5&link_gpu=5`);
    await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60000 });
    await painted(page);
    const errors = await page.locator('.link-errors').count();
    assert(errors === 0, `the link was refused in part: ${errors ? await page.textContent('.link-errors') : ''}`);
    assert(await page.inputValue('#shown-gpus') === '8-15', `lanes of ${await page.inputValue('#shown-gpus')}`);
    const view = await page.getAttribute('canvas', 'data-view');
    assert(view === '0.250000-0.500000', `the view is ${view}, not the link's zoom`);
    const linkGpu = await page.$eval('.timeline-head select', (s) => s.selectedOptions[0].textContent);
    assert(linkGpu === 'GPU 240 (stage 5)', `link lanes of ${linkGpu}`);
    // Every lane under the pointer belongs to stages 8 to 15, each of them found.
    const stages = await stagesUnderPointer(page, 0.5);
    assert(JSON.stringify(stages) === JSON.stringify([8, 9, 10, 11, 12, 13, 14, 15]), `lanes of stages ${stages}`);
    // The overview is one choice away, and the address follows the choice.
    const allHeight = async () => {
      await page.selectOption('#shown-gpus', 'all');
      await painted(page);
      await page.waitForFunction(() => !location.search.includes('gpus='), null, { timeout: 5000 });
      return (await stagesUnderPointer(page, 0.5)).length;
    };
    const overview = await allHeight();
    assert(overview > 8, `the overview shows lanes of only ${overview} stages`);
    await page.selectOption('#shown-gpus', '56-63');
    await page.waitForFunction(() => location.search.includes('gpus=56-63'), null, { timeout: 5000 });
    // A group this step does not have is refused by name, with the valid range.
    await page.goto(`${page.url().split('?')[0]}?v=1&preset=megatron-1t&gpus=70-80`);
    await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60000 });
    await painted(page);
    const refusal = await page.textContent('.link-errors');
    assert(/gpus: 70-80 is not among this scenario's simulated GPUs: valid are 0 to 63/.test(refusal), refusal);
    assert(await page.inputValue('#shown-gpus') === 'all', 'a refused group is not drawn');
  }, { timeout: 180000, viewport: { width: 1280, height: 1700 } }); // tall: the pointer reaches every lane unscrolled
}
