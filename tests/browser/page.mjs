// Browser tests of the page's simulation worker (src/client/, src/serve/):
// large scenarios, cancelled and failing runs, exports at any size, embed
// messages. Registered by run.mjs (`registerPageTests(...)`). Every wait ends
// in "finished or refused", never in a timing.

import { readFileSync } from 'node:fs';
import { ready, metric, afterRun, painted, runSeq } from './harness.mjs';

/** A link that once killed the page: valid, but its flows pile up without bound. */
export const KILLER_QUERY =
  '?v=1&gpus_per_node=1&nic_gbps=0.001&mode=inference&layers=2&hidden=64&heads=1&seq=1&vocab=1' +
  '&global_batch=83333&tp=1&dp=1&schedule=gpipe&tp_overlap=0';

/** Registers the tests; `h` carries run.mjs's helpers and paths. */
export function registerPageTests(test, h) {
  const { assert, close, canvasDrawn, matchesCli, ARTIFACTS } = h;

  const alertText = (page) => page.evaluate(() => document.querySelector('.run-alert[role="alert"]')?.textContent ?? null);

  /** The page still answers: a preset change simulates and matches the CLI. */
  async function alive(page, preset = 'contention') {
    await afterRun(page, () => page.selectOption('#f-preset', preset));
    await painted(page);
    await canvasDrawn(page);
    await matchesCli(page);
  }

  // 1T with TP overlap switched on, and its trace download: tests/browser/scale.mjs.

  test('page: the trace of a large preset is built off the page and equals its size estimate', async ({ page }) => {
    await afterRun(page, () => page.selectOption('#f-preset', 'megatron-145.6b'));
    await painted(page);
    const [download] = await Promise.all([
      page.waitForEvent('download', { timeout: 120000 }),
      page.getByRole('button', { name: 'Download trace (JSON)' }).click(),
    ]);
    const text = readFileSync(await download.path(), 'utf8');
    const parsed = JSON.parse(text);
    assert(parsed.traceEvents.length > 100000, `only ${parsed.traceEvents.length} trace events`);
    assert((await page.locator('.trace-problem').count()) === 0, 'a problem was reported next to the export buttons');
  }, { timeout: 240000 });

  test('page: the link that once killed the page ends finished or refused, and the page lives', async ({ page }) => {
    const base = page.url().split(/[?#]/)[0];
    await page.goto(base + KILLER_QUERY);
    await page.waitForFunction(() => document.body.dataset.errors === '1' || document.body.dataset.runAlert === '1'
      || Number(document.body.dataset.runSeq ?? '0') > 0, null, { timeout: 120000 });
    const outcome = await page.evaluate(() => ({ errors: document.body.dataset.errors, alert: document.body.dataset.runAlert,
      seq: document.body.dataset.runSeq }));
    if (outcome.alert === '1') {
      const text = await alertText(page);
      assert(text && /Stopped|stopped|internal error/.test(text), `the alert does not name the cause: ${text}`);
    }
    await page.screenshot({ path: `${ARTIFACTS}/killer-link.png` });
    await alive(page);
  }, { timeout: 240000 });

  test('page: a panic in the simulator becomes an alert with the link to report; the page lives', async ({ page, context }) => {
    await context.addInitScript(() => { globalThis.overlapLabTestHooks = true; });
    await page.reload();
    await ready(page);
    await painted(page);
    const step = await metric(page, 'step_time_ms');
    await page.evaluate(() => dispatchEvent(new Event('overlap-lab-test:panic')));
    await page.waitForSelector('.run-alert[role="alert"]', { timeout: 60000 });
    const text = await alertText(page);
    assert(/internal error/.test(text) && /report this link/i.test(text), `the alert: ${text}`);
    const link = await page.getAttribute('.run-alert .report-link a', 'href');
    assert(link && /\?v=1/.test(link), `no link to report: ${link}`);
    assert(close(await metric(page, 'step_time_ms'), step), 'the figures changed after the panic');
    await alive(page);
    assert((await page.locator('.run-alert').count()) === 0, 'the alert stayed after a run that finished');
  }, { timeout: 120000 });

  test('page: a run in flight dims the timeline under "Simulating"; Stop cancels it with an alert', async ({ page }) => {
    await painted(page);
    const step = await metric(page, 'step_time_ms');
    const seen = await page.evaluate(() => new Promise((resolve) => {
      const ob = new MutationObserver(() => {
        const stop = document.querySelector('.sim-status.busy button.stop');
        if (!stop) return;
        ob.disconnect();
        const status = document.querySelector('.sim-status [role="status"]').textContent;
        const opacity = Number(getComputedStyle(document.querySelector('.canvas-wrap')).opacity);
        stop.click();
        resolve({ status, opacity });
      });
      ob.observe(document.body, { childList: true, subtree: true, attributes: true });
      const sel = document.querySelector('#f-preset');
      sel.value = 'megatron-1t';
      sel.dispatchEvent(new Event('change', { bubbles: true }));
    }));
    assert(/Simulating/.test(seen.status), `status: ${seen.status}`);
    assert(seen.opacity < 1, `the timeline was not dimmed (opacity ${seen.opacity})`);
    await page.waitForSelector('.run-alert[role="alert"]');
    assert(/Cancelled/.test(await alertText(page)), `the alert: ${await alertText(page)}`);
    await page.waitForFunction(() => document.body.dataset.simulating === '0');
    assert(close(await metric(page, 'step_time_ms'), step), 'the previous figures did not stay');
    await canvasDrawn(page);
    await alive(page);
  }, { timeout: 120000 });

  test('page: dragging a slider runs only the newest value', async ({ page }) => {
    await afterRun(page, () => page.selectOption('#f-preset', 'megatron-145.6b'));
    await painted(page);
    const before = await runSeq(page);
    // Forty values in a row, as a drag gives them.
    await page.evaluate(() => {
      const slider = document.querySelector('input[aria-label="TP chunks (slider)"]');
      for (let v = 1; v <= 40; v++) {
        slider.value = String((v % 8) + 1);
        slider.dispatchEvent(new Event('input', { bubbles: true }));
      }
      slider.value = '3';
      slider.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await page.waitForFunction((n) => Number(document.body.dataset.runSeq) > n && document.body.dataset.simulating === '0',
      before, { timeout: 120000 });
    const runs = (await runSeq(page)) - before;
    assert(runs <= 2, `${runs} runs were shown for one drag`);
    const json = JSON.parse(await page.getAttribute('[data-scenario-json]', 'data-scenario-json'));
    assert(json.overlap.tp_chunks === 3, `the newest value was not the one simulated: ${JSON.stringify(json.overlap)}`);
    await matchesCli(page);
  }, { timeout: 240000 });

  test('page: a switch that makes the scenario invalid is marked and explained beside it; the page stays usable', async ({ page }) => {
    const base = page.url().split(/[?#]/)[0];
    await page.goto(`${base}?v=1&seq=2050`);
    await ready(page);
    const step = await metric(page, 'step_time_ms');
    const sp = page.locator('#f-workload-sequence-parallel');
    await sp.check();
    await page.waitForFunction(() => document.body.dataset.errors === '1');
    assert((await sp.getAttribute('aria-invalid')) === 'true', 'the switch is not marked invalid');
    assert(await page.locator('.field.toggle.invalid:has(#f-workload-sequence-parallel)').count() === 1, 'no visible mark');
    const message = await page.textContent('#f-workload-sequence-parallel-err');
    assert(/2050/.test(message) && /tp/.test(message), `no message beside the switch: ${message}`);
    assert(close(await metric(page, 'step_time_ms'), step), 'the figures of the last valid run did not stay');
    await sp.uncheck();
    await page.waitForFunction(() => document.body.dataset.errors === '0');
    assert((await sp.getAttribute('aria-invalid')) === 'false', 'the mark stayed');
    await afterRun(page, () => page.getByRole('switch', { name: 'DP overlap' }).click());
    await matchesCli(page);
  });

  /** A parent page with the app in a frame; returns the frame and a poster. */
  async function framed(page, context, query) {
    const origin = new URL(page.url()).origin;
    const parentUrl = `${origin}/__embed-page-test.html`;
    await context.route(parentUrl, (route) => route.fulfill({
      contentType: 'text/html',
      body: `<!DOCTYPE html><html><body style="margin:0">
<script>window.heights = []; addEventListener('message', (e) => {
  if (e.data && e.data.type === 'overlap-lab:height') window.heights.push(e.data.height);
});</script>
<iframe src="./${query}" title="Overlap Lab" style="border:0;width:640px;height:600px"></iframe>
</body></html>`,
    }));
    await page.goto(parentUrl);
    const frame = page.frames().find((f) => f !== page.mainFrame());
    await ready(frame);
    await painted(frame);
    return frame;
  }

  test('embed: 1000 set-scenario messages coalesce to the newest; a height request is answered', async ({ page, context }) => {
    const frame = await framed(page, context, '?v=1&embed=1&controls=tp,pp,dp');
    const before = await runSeq(frame);
    const heightsBefore = await page.evaluate(() => window.heights.length);
    await page.evaluate(() => {
      const w = document.querySelector('iframe').contentWindow;
      for (let i = 0; i < 1000; i++) {
        w.postMessage({ type: 'overlap-lab:set-scenario', query: `v=1&preset=contention&bucket_mb=${1 + (i % 50)}` }, '*');
      }
      w.postMessage({ type: 'overlap-lab:set-scenario', query: 'v=1&preset=contention&dp_overlap=0' }, '*');
      w.postMessage({ type: 'overlap-lab:request-height' }, '*');
    });
    await page.waitForFunction((n) => window.heights.length > n, heightsBefore, { timeout: 30000 });
    await frame.waitForFunction((n) => Number(document.body.dataset.runSeq) > n && document.body.dataset.simulating === '0',
      before, { timeout: 60000 });
    const runs = (await runSeq(frame)) - before;
    assert(runs <= 3, `${runs} simulations were shown for one burst of messages`);
    assert(!(await frame.getByRole('switch', { name: 'DP overlap' }).isChecked()), 'the newest message did not win');
    const full = await context.newPage();
    await full.goto(`${new URL(page.url()).origin}/?v=1&preset=contention&dp_overlap=0`);
    await ready(full);
    const want = await metric(full, 'step_time_ms');
    await full.close();
    assert(close(await metric(frame, 'step_time_ms'), want), 'the frame shows other figures than the newest message\'s link');
  }, { timeout: 120000 });

  test('embed: a burst of 5000 height requests gets one reply, not one per message', async ({ page, context }) => {
    const frame = await framed(page, context, '?v=1&embed=1&controls=tp,pp,dp');
    await frame.waitForFunction(() => document.body.dataset.simulating === '0', null, { timeout: 60000 });
    // Let any resize the first paint caused be posted before counting.
    await page.waitForTimeout(500);
    const before = await page.evaluate(() => window.heights.length);
    await page.evaluate(() => {
      const w = document.querySelector('iframe').contentWindow;
      for (let i = 0; i < 5000; i++) w.postMessage({ type: 'overlap-lab:request-height' }, '*');
    });
    await page.waitForFunction((n) => window.heights.length > n, before, { timeout: 30000 });
    await page.waitForTimeout(500);
    const replies = (await page.evaluate(() => window.heights.length)) - before;
    assert(replies >= 1 && replies <= 10, `5000 height requests got ${replies} replies`);
  }, { timeout: 120000 });

  test('embed: set-scenario rewrites the frame address, so that reloading the frame keeps the scenario', async ({ page, context }) => {
    const frame = await framed(page, context, '?v=1&embed=1&controls=tp,pp,dp');
    const before = await runSeq(frame);
    await page.evaluate(() => document.querySelector('iframe').contentWindow.postMessage(
      { type: 'overlap-lab:set-scenario', query: 'v=1&preset=contention&dp_overlap=0' }, '*'));
    await frame.waitForFunction((n) => Number(document.body.dataset.runSeq) > n, before);
    await frame.waitForFunction(() => /preset=contention/.test(location.search) && /dp_overlap=0/.test(location.search)
      && /embed=1/.test(location.search), null, { timeout: 10000 });
    const step = await metric(frame, 'step_time_ms');
    // What a reload of the frame opens: its address, now.
    const href = await frame.evaluate(() => location.href);
    const again = await context.newPage();
    await again.goto(href);
    await ready(again);
    assert(!(await again.getByRole('switch', { name: 'DP overlap' }).isChecked()), `the frame's address lost dp_overlap=0: ${href}`);
    assert(close(await metric(again, 'step_time_ms'), step), `the frame's address ${href} shows other figures`);
    await again.close();
  }, { timeout: 120000 });
}
