// Browser tests of issue 5: share links, embedding, export, Content-Security-Policy.
// Registered by run.mjs (`registerShareTests(...)`), so the one test command runs
// them; every test fails on a console error or a request leaving the machine.

import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ready, metric, afterRun, painted } from './harness.mjs';

/** Registers the tests; `h` carries run.mjs's helpers and paths. */
export function registerShareTests(test, h) {
  const { assert, close, canvasDrawn, cliReport, matchesCli, CLI, TMP, ARTIFACTS, DIST } = h;

  const cli = (args, input) => {
    const file = join(TMP, `share-${process.hrtime.bigint()}.json`);
    writeFileSync(file, input);
    return execFileSync(CLI, [...args, file], { encoding: 'utf8', maxBuffer: 1 << 30 });
  };
  const base = (page) => page.url().split(/[?#]/)[0];
  const search = (page) => page.evaluate(() => location.search);
  const alertFields = (page) => page.$$eval('.link-errors[role="alert"] li[data-field]', (els) => els.map((e) => e.dataset.field));
  /** Opens `query` on the test's page and waits for the app. */
  async function goto(page, query) {
    await page.goto(base(page) + query);
    await ready(page);
    await painted(page);
  }
  /** The address bar stays as it was, also after a click that changes nothing. */
  async function keepsLink(page, query) {
    await page.waitForTimeout(600);
    assert((await search(page)) === query, `the address changed to ${await search(page)}`);
    await page.click('h2#timeline-h');
    await page.waitForTimeout(500);
    assert((await search(page)) === query, `a click rewrote the address to ${await search(page)}`);
  }
  const defaultStep = async (context) => {
    const page = await context.newPage();
    await page.goto(h.serverUrl());
    await ready(page);
    const v = await metric(page, 'step_time_ms');
    await page.close();
    return v;
  };

  test('share: a link from `overlap-lab link` shows the CLI step_time_ms', async ({ page }) => {
    const scenario = JSON.stringify({
      hardware: { preset: 'dgx-a100', nodes: 2 },
      workload: { layers: 12, micro_batch: 1, global_batch: 8 },
      parallel: { tp: 8, pp: 2, dp: 1 },
      overlap: { tp: false, tp_chunks: 8 },
      sm_tax: 0.2,
    });
    const query = cli(['link'], scenario).trim();
    assert(query.startsWith('v=1') && query.length < 200, `odd link: ${query}`);
    const expected = JSON.parse(cli(['simulate', '--json'], scenario)).step_time_ms;
    await goto(page, `?${query}`);
    const shown = await metric(page, 'step_time_ms');
    assert(close(shown, expected), `page shows ${shown}, CLI says ${expected} for ?${query}`);
    await matchesCli(page);
    assert((await page.locator('.link-errors').count()) === 0, 'a valid link raised the alert');
    await keepsLink(page, `?${query}`);
  });

  test('share: a broken link opens the default scenario, names each bad field and keeps the link', async ({ page, context }) => {
    const query = '?v=1&tp=banana&layers=-3';
    await goto(page, query);
    const fields = await alertFields(page);
    assert(fields.includes('tp') && fields.includes('layers'), `the alert names ${fields.join(', ')}`);
    const text = await page.textContent('.link-errors[role="alert"]');
    assert(/banana/.test(text) && /valid|whole number/i.test(text), `the alert does not say what is valid: ${text}`);
    assert((await page.inputValue('#f-preset')) === 'didactic', 'not the default preset');
    const step = await metric(page, 'step_time_ms');
    assert(close(step, await defaultStep(context)), 'the default scenario did not open');
    await matchesCli(page);
    await page.screenshot({ path: join(ARTIFACTS, 'broken-link-alert.png'), fullPage: false });
    const historyLength = await page.evaluate(() => history.length);
    await keepsLink(page, query);
    // The first real change writes the address, in place.
    await afterRun(page, () => page.getByRole('switch', { name: 'DP overlap' }).click());
    await page.waitForFunction(() => location.search === '?v=1&dp_overlap=0', null, { timeout: 5000 })
      .catch(async () => { throw new Error(`after a change the address is ${await search(page)}`); });
    assert((await page.evaluate(() => history.length)) === historyLength, 'a change added a history entry');
  });

  test('share: on a phone a broken link\'s message is on the first screen, above the preset picker', async ({ page }) => {
    // The phone layout reorders the panels (style.css); the message must not
    // be sent to the bottom of a page several screens long.
    await goto(page, '?v=1&preset=contention&pp_overlap=maybe');
    const where = await page.evaluate(() => {
      const top = (sel) => document.querySelector(sel).getBoundingClientRect().top + scrollY;
      return { alert: top('.link-errors[role="alert"]'), picker: top('#f-preset'), screen: innerHeight };
    });
    assert(where.alert < where.picker, `the message sits below the preset picker: ${JSON.stringify(where)}`);
    assert(where.alert >= 0 && where.alert < where.screen / 2, `the message is not on the first screen: ${JSON.stringify(where)}`);
    await page.screenshot({ path: join(ARTIFACTS, 'broken-link-alert-375x700.png'), fullPage: false });
  }, { viewport: { width: 375, height: 700 } });

  test('share: a link over the cost budget is refused by the worker, opens the default with the batch that fits, and keeps the link', async ({ page, context }) => {
    // The page checks a link's fields as it opens it but leaves the step's
    // cost to the worker (a long task on the largest presets): the refusal
    // comes from where the step would run, naming the field and what fits.
    const query = '?v=1&preset=megatron-1t&global_batch=99999996';
    await goto(page, query);
    const fields = await alertFields(page);
    assert(fields.length === 1 && fields[0] === 'global_batch', `the alert names ${fields.join(', ')}`);
    const text = await page.textContent('.link-errors[role="alert"]');
    assert(/refused this link's scenario when it ran/.test(text) && /limit/.test(text) && /\d{3,}/.test(text),
      `the alert does not give the limit and a batch that fits: ${text}`);
    assert((await page.inputValue('#f-preset')) === 'didactic', 'not the default preset');
    assert(close(await metric(page, 'step_time_ms'), await defaultStep(context)), 'the default scenario did not open');
    await keepsLink(page, query);
  }, { timeout: 120000 });

  test('share: a link of an unknown version opens the default, says so and keeps the link', async ({ page }) => {
    const query = '?v=7&tp_overlap=0&layers=4';
    await goto(page, query);
    const fields = await alertFields(page);
    assert(fields.includes('v'), `the alert names ${fields.join(', ')}`);
    assert(await page.getByRole('switch', { name: 'TP overlap' }).isChecked(), 'fields of an unknown version were applied');
    await matchesCli(page);
    await keepsLink(page, query);
  });

  test('share: a truncated link opens its preset, names the cut-off part and keeps the link', async ({ page }) => {
    const query = '?v=1&preset=contention&tp_overlap=0&tp_chu';
    await goto(page, query);
    assert((await page.inputValue('#f-preset')) === 'contention', 'the named preset did not open');
    assert(!(await page.getByRole('switch', { name: 'TP overlap' }).isChecked()), 'the readable part was lost');
    const fields = await alertFields(page);
    assert(fields.includes('tp_chu'), `the alert names ${fields.join(', ')}`);
    await matchesCli(page);
    await keepsLink(page, query);
    // A value cut in the middle of an escape is refused too, and never inserted as HTML.
    await goto(page, '?v=1&hw=%3Cimg%20src%3Dx%3E&sm_tax=0.%');
    const f2 = await alertFields(page);
    assert(f2.includes('hw') && f2.includes('sm_tax'), `the alert names ${f2.join(', ')}`);
    assert((await page.locator('.link-errors img').count()) === 0, 'link text became HTML');
  });

  test('share: view keys reopen the same view; state changes rewrite the address', async ({ page }) => {
    const query = '?v=1&tp_chunks=8&zoom=0.25-0.5&playhead=0.3';
    await goto(page, query);
    assert((await page.locator('.link-errors').count()) === 0, 'view keys raised the alert');
    await page.waitForFunction(() => document.querySelector('input[aria-label="Playhead"]').value === '300');
    await canvasDrawn(page);
    await keepsLink(page, query);
    await page.locator('canvas').focus();
    await page.keyboard.press('0'); // fit: the zoom goes from the link
    await page.waitForFunction(() => !location.search.includes('zoom='), null, { timeout: 5000 });
    assert((await search(page)).includes('tp_chunks=8') && (await search(page)).includes('playhead=0.3'),
      `the rest of the state was lost: ${await search(page)}`);
  });

  test('share: a link opens the guided tour at its chapter; a bad chapter is named', async ({ page }) => {
    await goto(page, '?v=1&preset=contention&dp_overlap=0&chapter=4');
    await page.waitForFunction(() => /Chapter 4 of/.test(document.querySelector('.tour').textContent));
    await keepsLink(page, '?v=1&preset=contention&dp_overlap=0&chapter=4');
    await page.getByRole('button', { name: 'Previous chapter' }).click();
    await page.waitForFunction(() => /chapter=3/.test(location.search), null, { timeout: 5000 });
    await page.getByRole('button', { name: 'Leave the tour' }).click();
    await page.waitForFunction(() => !/chapter=/.test(location.search), null, { timeout: 5000 });
    await goto(page, '?v=1&chapter=99');
    assert((await alertFields(page)).includes('chapter'), 'chapter=99 was not reported');
  });

  test('share: presets push history entries; Back and Forward move between them', async ({ page }) => {
    const length0 = await page.evaluate(() => history.length);
    await afterRun(page, () => page.selectOption('#f-preset', 'contention'));
    await page.waitForFunction(() => location.search === '?v=1&preset=contention', null, { timeout: 5000 });
    assert((await page.evaluate(() => history.length)) === length0 + 1, 'choosing a preset did not push');
    await afterRun(page, () => page.getByRole('switch', { name: 'PP overlap' }).click());
    await page.waitForFunction(() => location.search === '?v=1&preset=contention&pp_overlap=0', null, { timeout: 5000 });
    assert((await page.evaluate(() => history.length)) === length0 + 1, 'an edit pushed a history entry');
    await afterRun(page, () => page.goBack());
    assert((await page.inputValue('#f-preset')) === 'didactic', 'Back did not return to the default preset');
    await afterRun(page, () => page.goForward());
    assert((await page.inputValue('#f-preset')) === 'contention', 'Forward did not return to contention');
    assert(!(await page.getByRole('switch', { name: 'PP overlap' }).isChecked()), 'Forward lost the edit');
    await matchesCli(page);
  });

  test('share: Copy link puts the full address on the clipboard, with a fallback field', async ({ page, context }) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(page.url()).origin });
    await afterRun(page, () => page.getByRole('switch', { name: 'TP overlap' }).click());
    await page.getByRole('button', { name: 'Copy link' }).click();
    await page.waitForSelector('.copied:not(:empty)');
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert(copied === (await page.evaluate(() => location.href)), `copied ${copied}`);
    assert(copied.includes('tp_overlap=0'), `the copied link lacks the edit: ${copied}`);
    await page.getByRole('button', { name: 'Copy embed code' }).click();
    await page.waitForFunction(() => /Embed code copied/.test(document.querySelector('.copied').textContent));
    const snippet = await page.evaluate(() => navigator.clipboard.readText());
    assert(/^<iframe src="[^"]+embed=1/.test(snippet) && snippet.includes('tp_overlap=0'), `embed code: ${snippet}`);
    // A refused clipboard shows the link in a field instead.
    await page.evaluate(() => {
      navigator.clipboard.writeText = () => Promise.reject(new DOMException('denied', 'NotAllowedError'));
    });
    await page.getByRole('button', { name: 'Copy link' }).click();
    await page.waitForSelector('.copy-field');
    assert((await page.inputValue('.copy-field')) === copied, 'the fallback field does not hold the link');
  });

  test('export: every download parses; the trace equals `overlap-lab trace`', async ({ page }) => {
    await painted(page);
    const save = async (name) => {
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name }).click(),
      ]);
      return { name: download.suggestedFilename(), bytes: readFileSync(await download.path()) };
    };
    const trace = await save('Download trace (JSON)');
    const parsed = JSON.parse(trace.bytes.toString('utf8'));
    assert(Array.isArray(parsed.traceEvents) && parsed.traceEvents.length > 10, 'the trace has no traceEvents');
    const json = await page.getAttribute('[data-scenario-json]', 'data-scenario-json');
    assert(trace.bytes.toString('utf8') === cli(['trace'], json), 'the page trace differs from `overlap-lab trace`');
    assert(trace.name.endsWith('.json'), trace.name);

    const svg = await save('Download SVG');
    const svgCheck = await page.evaluate((text) => {
      const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
      return { error: doc.querySelector('parsererror')?.textContent ?? null, rects: doc.querySelectorAll('rect').length,
        root: doc.documentElement.nodeName };
    }, svg.bytes.toString('utf8'));
    assert(svgCheck.error === null && svgCheck.root === 'svg', `the SVG does not parse: ${svgCheck.error}`);
    assert(svgCheck.rects > 50, `only ${svgCheck.rects} rects in the SVG`);
    writeFileSync(join(ARTIFACTS, 'export.svg'), svg.bytes);

    const png = await save('Download PNG');
    const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
    assert(signature.every((b, i) => png.bytes[i] === b), 'the PNG lacks the PNG signature');
    assert(png.bytes.length > 2000, `the PNG is only ${png.bytes.length} bytes`);
    writeFileSync(join(ARTIFACTS, 'export.png'), png.bytes);

    const csv = (await save('Download figures (CSV)')).bytes.toString('utf8').trim().split('\n');
    assert(csv[0] === 'name,value', `CSV header: ${csv[0]}`);
    assert(csv.length > 20, `only ${csv.length - 1} CSV rows`);
    const row = csv.find((l) => l.startsWith('step_time_ms,'));
    assert(row && close(Number(row.split(',')[1]), await metric(page, 'step_time_ms')), `CSV step time row: ${row}`);
  });

  for (const viewport of [{ width: 375, height: 700 }, { width: 800, height: 450 }]) {
    test(`embed: embed=1 draws and fits ${viewport.width}x${viewport.height} without sideways scrolling`, async ({ page }) => {
      await goto(page, '?v=1&preset=contention&embed=1&controls=tp,pp,dp');
      await canvasDrawn(page);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert(overflow <= 1, `the embedded page scrolls sideways by ${overflow}px`);
      assert((await page.getByRole('switch').count()) === 3, 'controls=tp,pp,dp did not give exactly the three switches');
      assert((await page.locator('#f-preset').count()) === 0, 'the full control panel is shown');
      const href = await page.getAttribute('a.open-full', 'href');
      assert(href.includes('preset=contention') && !href.includes('embed'), `"Open in Overlap Lab" goes to ${href}`);
      await page.screenshot({ path: join(ARTIFACTS, `embed-${viewport.width}x${viewport.height}.png`), fullPage: true });
    }, { viewport });
  }

  test('embed: posts its height to the parent and accepts only the documented messages', async ({ page, context }) => {
    const origin = new URL(page.url()).origin;
    const parentUrl = `${origin}/__embed-test.html`;
    await context.route(parentUrl, (route) => route.fulfill({
      contentType: 'text/html',
      body: `<!DOCTYPE html><html><body style="margin:0">
<script>window.heights = []; addEventListener('message', (e) => {
  if (e.data && e.data.type === 'overlap-lab:height') window.heights.push(e.data.height);
  if (e.data && e.data.type === 'overlap-lab:height') document.querySelector('iframe').style.height = e.data.height + 'px';
});</script>
<iframe src="./?v=1&embed=1&controls=tp,pp,dp" title="Overlap Lab" style="border:0;width:640px;height:300px"></iframe>
</body></html>`,
    }));
    await page.goto(parentUrl);
    await page.waitForFunction(() => window.heights.length > 0, null, { timeout: 30000 });
    const frame = page.frames().find((f) => f !== page.mainFrame());
    await ready(frame);
    await canvasDrawn(frame);
    // The page posts its height whenever its content resizes; the last
    // layout after the first drawing may come a moment later on a loaded
    // machine, so the posted height is read once the posts have caught up.
    const reading = async () => [
      await page.evaluate(() => window.heights.at(-1)),
      await frame.evaluate(() => Math.ceil(document.querySelector('.embed').getBoundingClientRect().bottom)),
    ];
    let [height, actual] = await reading();
    for (let i = 0; i < 50 && Math.abs(height - actual) > 2; i++) {
      await page.waitForTimeout(100);
      [height, actual] = await reading();
    }
    assert(height > 200 && Math.abs(height - actual) <= 2, `posted height ${height}, content is ${actual}`);

    const post = (msg) => page.evaluate((m) => document.querySelector('iframe').contentWindow.postMessage(m, '*'), msg);
    const seq = () => frame.evaluate(() => Number(document.body.dataset.runSeq));
    // Set a scenario.
    let before = await seq();
    await post({ type: 'overlap-lab:set-scenario', query: 'v=1&tp_overlap=0' });
    await frame.waitForFunction((n) => Number(document.body.dataset.runSeq) > n, before);
    assert(!(await frame.getByRole('switch', { name: 'TP overlap' }).isChecked()), 'set-scenario did not apply');
    const full = await context.newPage();
    await full.goto(`${origin}/?v=1&tp_overlap=0`);
    await ready(full);
    const want = await metric(full, 'step_time_ms');
    await full.close();
    assert(close(await metric(frame, 'step_time_ms'), want), 'set-scenario shows other figures than its link');
    // Malformed and unknown messages change nothing; text is never HTML.
    before = await seq();
    await post({ type: 'overlap-lab:set-scenario', query: 42 });
    await frame.waitForSelector('.link-errors li[data-field="query"]');
    await post('overlap-lab:set-scenario');
    await post({ type: 'overlap-lab:eval', code: 'document.body.remove()' });
    await post({ type: 'overlap-lab:set-scenario', query: 'v=1&hw=<img src=x onerror=alert(1)>' });
    await frame.waitForSelector('.link-errors li[data-field="hw"]');
    assert((await frame.locator('.link-errors img').count()) === 0, 'message text became HTML');
    assert((await frame.locator('.embed').count()) === 1, 'an unknown message was acted on');
    // Inside a frame, even a preset change never adds to the host page's history.
    const length = await page.evaluate(() => history.length);
    before = await seq();
    await post({ type: 'overlap-lab:set-scenario', query: 'v=1&preset=contention' });
    await frame.waitForFunction((n) => Number(document.body.dataset.runSeq) > n, before);
    await frame.getByRole('switch', { name: 'DP overlap' }).click();
    await frame.waitForFunction(() => location.search.startsWith('?v=1&preset=contention&dp_overlap=0&embed=1'), null, { timeout: 5000 });
    assert((await page.evaluate(() => history.length)) === length, 'the embedded page added history entries');
    await page.screenshot({ path: join(ARTIFACTS, 'embed-in-parent.png'), fullPage: true });
  });

  test('docs: the course-author examples open with the CLI figures, embedded too', async ({ page, context }) => {
    const root = join(DIST, '..');
    const md = readFileSync(join(root, 'docs/course-authors.md'), 'utf8');
    const links = [...md.matchAll(/^\?v=1\S*$/gm)].map((m) => m[0]);
    const files = ['tp-window', 'dp-window', 'contention'];
    assert(links.length === files.length, `expected ${files.length} example links, found ${links.length}`);
    for (const [i, link] of links.entries()) {
      const json = readFileSync(join(root, 'docs/examples', `${files[i]}.json`), 'utf8');
      const scenarioPart = link.split('&').filter((kv) => !/^(zoom|playhead|link_gpu|embed|controls)=/.test(kv)).join('&');
      assert(scenarioPart === `?${cli(['link'], json).trim()}`, `${link} is not what \`overlap-lab link\` prints`);
      await goto(page, link);
      assert((await page.locator('.link-errors').count()) === 0, `${link} raised the alert`);
      await canvasDrawn(page);
      const want = JSON.parse(cli(['simulate', '--json'], json)).step_time_ms;
      assert(close(await metric(page, 'step_time_ms'), want), `${link}: step time differs from the CLI`);
    }
    const origin = new URL(page.url()).origin;
    const html = readFileSync(join(root, 'docs/examples/course-page.html'), 'utf8')
      .replaceAll('src="overlap-lab/', 'src="./').replaceAll('loading="lazy"', '');
    await context.route(`${origin}/__course-page.html`, (route) => route.fulfill({ contentType: 'text/html', body: html }));
    await page.goto(`${origin}/__course-page.html`);
    await page.waitForFunction(() => [...document.querySelectorAll('iframe.lab')].every((f) => f.style.height && f.style.height !== '560px'),
      null, { timeout: 60000 });
    for (const frame of page.frames().filter((f) => f !== page.mainFrame())) {
      await ready(frame);
      assert((await frame.locator('.link-errors').count()) === 0, `${frame.url()} raised the alert`);
    }
    await page.screenshot({ path: join(ARTIFACTS, 'course-page.png'), fullPage: true });
  }, { timeout: 120000 });

  test('hosting: dist/ works from a subfolder; links keep the folder', async ({ page, context }) => {
    const origin = new URL(page.url()).origin;
    const types = { html: 'text/html', js: 'text/javascript', wasm: 'application/wasm', css: 'text/css', svg: 'image/svg+xml' };
    await context.route(`${origin}/courses/hpc/lab/**`, (route) => {
      let path = new URL(route.request().url()).pathname.replace('/courses/hpc/lab/', '') || 'index.html';
      if (path.endsWith('/')) path += 'index.html';
      try {
        const body = readFileSync(join(DIST, path));
        route.fulfill({ body, contentType: types[path.split('.').pop()] ?? 'application/octet-stream' });
      } catch {
        route.fulfill({ status: 404, body: 'not found' });
      }
    });
    await page.goto(`${origin}/courses/hpc/lab/?v=1&preset=contention&embed=1`);
    await ready(page);
    // A new run's picture is painted off screen over a few frames, then shown.
    await painted(page);
    await canvasDrawn(page);
    const href = await page.getAttribute('a.open-full', 'href');
    assert(href.startsWith(`${origin}/courses/hpc/lab/?v=1&preset=contention`), `"Open in Overlap Lab" goes to ${href}`);
  });

  test('security: the page has a Content-Security-Policy and no inline script', async ({ page }) => {
    const csp = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
    assert(csp && /script-src 'self' 'wasm-unsafe-eval'(;|$)/.test(csp), `CSP: ${csp}`);
    assert(!/unsafe-inline[^;]*;/.test(csp.split('script-src')[1].split(';')[0] + ';'), 'scripts may be inline');
    const html = readFileSync(join(DIST, 'index.html'), 'utf8');
    const inline = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)].filter(([, attrs, body]) => !/\bsrc=/.test(attrs) || body.trim());
    assert(inline.length === 0, `dist/index.html has inline script: ${inline.map((m) => m[0].slice(0, 80)).join(' | ')}`);
    // Loading the page prints nothing to the console: no warning either (a hash
    // Chromium ignores on the wasm's preload once warned on every load).
    const fresh = await page.context().newPage();
    const said = [];
    fresh.on('console', (m) => said.push(`${m.type()}: ${m.text()}`));
    await fresh.goto(page.url());
    await ready(fresh);
    await fresh.waitForTimeout(200);
    const noise = said.filter((m) => !m.startsWith('log:') && !m.startsWith('debug:'));
    assert(noise.length === 0, `loading the page printed: ${noise.join(' | ').slice(0, 300)}`);
    await fresh.close();
  });
}
