// Browser tests of issue 58, "The page explains what it shows": the "what
// changed" sentence names EP and CP, the keyboard reaches the scenario
// controls by a skip link and before share and export, the share panel's
// embed checkboxes have names of their own, and the static server lets
// another origin read the site. Registered by run.mjs
// (`registerExplainTests(...)`).

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterRun, painted, ready } from './harness.mjs';

/** Registers the tests; `h` carries run.mjs's helpers and paths. */
export function registerExplainTests(test, h) {
  const { assert, serverUrl, ARTIFACTS, DIST } = h;

  async function goto(page, query) {
    await page.goto(serverUrl() + query);
    await ready(page);
    await painted(page);
  }
  // The headline's (the table view repeats it).
  const why = (page) => page.locator('.step-why').first().textContent();

  /** The sentence's shape: no empty clause, no signed zero, one unit. */
  function wellFormed(text) {
    assert(!/: ,|: :/.test(text), `a hole in the sentence: ${text}`);
    assert(!/[+−]0(\.0+)? /.test(text), `a signed zero: ${text}`);
    const units = new Set([...text.matchAll(/\d (ms|µs|s)\b/g)].map((m) => m[1]));
    assert(units.size === 1, `units ${[...units]}: ${text}`);
  }

  for (const [preset, axis, switchTo, sign, size, embed] of [
    ['moe-didactic', 'EP', 'on', '−', [1440, 900], false],
    ['long-context-ring', 'CP', 'off', '+', [390, 844], false],
    ['moe-didactic', 'EP', 'on', '−', [640, 900], true],
  ]) {
    const where = embed ? 'an embed' : `${size[0]}x${size[1]}`;
    test(`explain: ${axis} overlap ${switchTo} on ${preset} (${where}) is explained by ${axis} exposed`, async ({ page }) => {
      await goto(page, `?v=1&preset=${preset}${embed ? `&embed=1&controls=${axis.toLowerCase()}` : ''}`);
      const sw = page.getByRole('switch', { name: `${axis} overlap`, exact: true });
      await afterRun(page, () => sw.click());
      await painted(page);
      await page.waitForFunction(() => document.querySelector('.step-why')?.textContent.includes('step '));
      const text = await why(page);
      assert(text.startsWith(`${axis} overlap ${switchTo}: ${axis} exposed ${sign}`), `the sentence: ${text}`);
      wellFormed(text);
      const tag = `${preset}-${axis.toLowerCase()}-${switchTo}${embed ? '-embed' : ''}-${size[0]}`;
      await page.locator('.step-why').first().scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(ARTIFACTS, `explain-why-${tag}.png`) });
    }, { viewport: { width: size[0], height: size[1] } });
  }

  for (const [width, height] of [[1440, 900], [390, 844]]) {
    test(`explain: a skip link goes to the scenario controls, which come before share and export in Tab order (${width}x${height})`, async ({ page }) => {
      const focused = () => page.evaluate(() => {
        const e = document.activeElement;
        return { id: e.id, text: e.textContent.trim(), name: e.getAttribute('aria-label') ?? e.textContent.trim() };
      });
      // The third skip link, after the timeline's and the figures'.
      for (let i = 0; i < 3; i++) await page.keyboard.press('Tab');
      const link = await focused();
      assert(link.text === 'Skip to the scenario controls', `third Tab stop: ${JSON.stringify(link)}`);
      await page.keyboard.press('Enter');
      assert((await focused()).id === 'f-preset', `the skip link focused ${JSON.stringify(await focused())}`);
      assert((await page.evaluate(() => location.hash)) === '', 'the skip link changed the address');
      await page.screenshot({ path: join(ARTIFACTS, `explain-skip-controls-${width}.png`) });
      // From the top, Tab reaches the preset picker and the TP switch
      // before the first share button and the embed's checkboxes.
      await goto(page, '?v=1');
      const order = [];
      for (let k = 0; k < 400; k++) {
        await page.keyboard.press('Tab');
        const f = await focused();
        if (f.id === 'f-preset') order.push('preset');
        if (f.id === 'f-overlap-tp') order.push('tp switch');
        if (f.text === 'Copy link') order.push('share');
        if (f.name === 'Include TP overlap in the embed') { order.push('embed pick'); break; }
      }
      assert(JSON.stringify(order) === JSON.stringify(['preset', 'tp switch', 'share', 'embed pick']),
        `Tab order: ${order.join(', ')}`);
    }, { viewport: { width, height } });
  }

  test('explain: the embed checkboxes of the share panel are named apart from the scenario switches', async ({ page }) => {
    for (const label of ['TP overlap', 'PP overlap', 'DP overlap']) {
      const sw = await page.getByRole('switch', { name: label, exact: true }).count();
      const pick = await page.getByRole('checkbox', { name: `Include ${label} in the embed`, exact: true }).count();
      const same = await page.getByRole('checkbox', { name: label, exact: true }).count();
      assert(sw === 1 && pick === 1 && same === 0, `${label}: ${sw} switch, ${pick} "Include" box, ${same} box of the same name`);
    }
    const names = await page.$$eval('.embed-pick input', (els) => els.map((e) => e.getAttribute('aria-label')));
    assert(names.length > 0 && new Set(names).size === names.length && names.every((n) => /^Include .+ in the embed$/.test(n)),
      `the embed checkboxes' names: ${names.join(' | ')}`);
  }, { viewport: { width: 1440, height: 900 } });

  test('explain: the static server lets any origin read every file of the site (widget, worker, wasm, its JS)', async () => {
    const files = readdirSync(DIST).filter((f) => /\.(js|wasm|css|html)$/.test(f));
    for (const need of ['overlap-lab.js', 'sim-worker.js', 'index.html']) assert(files.includes(need), `dist lacks ${need}`);
    assert(files.some((f) => f.endsWith('.wasm')), 'dist has no wasm');
    for (const f of files) {
      const res = await fetch(serverUrl() + f, { headers: { origin: 'http://course.example' } });
      assert(res.ok, `${f}: ${res.status}`);
      assert(res.headers.get('access-control-allow-origin') === '*', `${f}: access-control-allow-origin ${res.headers.get('access-control-allow-origin')}`);
    }
  });

  const sweepPoints = async (page, n) => {
    await page.waitForFunction((count) => {
      const st = document.querySelector('.sweep-status');
      return st && Number(st.dataset.sweepArrived) === count && Number(st.dataset.sweepCount) === count;
    }, n, { timeout: 60000 });
    return page.$$eval('[data-sweep-value]', (els) =>
      els.map((e) => ({ value: e.dataset.sweepValue, refused: e.dataset.refused === '1' })));
  };

  test('explain: the TP-chunks sweep takes the powers of two; the schedule sweep runs every schedule the control offers', async ({ page }) => {
    await page.goto(`${serverUrl()}?v=1&preset=didactic&view=sweep&sweep=overlap.tp_chunks`);
    await ready(page);
    const chunks = await sweepPoints(page, 7);
    assert(chunks.map((p) => p.value).join(',') === '1,2,4,8,16,32,64', `TP chunks: ${chunks.map((p) => p.value)}`);
    await page.goto(`${serverUrl()}?v=1&preset=didactic&view=sweep&sweep=parallel.schedule`);
    await ready(page);
    const offered = await page.$$eval('#f-parallel-schedule option', (os) => os.map((o) => o.value));
    const rows = await sweepPoints(page, offered.length);
    assert(rows.map((p) => p.value).join(',') === offered.join(','), `rows ${rows.map((p) => p.value)} against the control's ${offered}`);
    for (const v of ['zb-v', 'dualpipe-v']) {
      assert(rows.some((p) => p.value === v && !p.refused), `${v} is refused: ${JSON.stringify(rows)}`);
    }
    await page.locator('.plot-view').screenshot({ path: join(ARTIFACTS, 'explain-schedule-sweep.png') });
  }, { viewport: { width: 1440, height: 900 }, timeout: 120000 });

  for (const [width, height] of [[1440, 900], [390, 844]]) {
    test(`explain: a scenario that does not fit says so on the first screen, with the memory advice's change (${width}x${height})`, async ({ page }) => {
      // The didactic scenario (6.0 GB per GPU) on 5 GB GPUs: sharding its
      // optimizer states, the biggest part, over the 2 replicas would fit it.
      await goto(page, '?v=1&preset=didactic&hbm_gb=5');
      const notice = page.locator('[data-memory-notice]');
      await notice.waitFor();
      const text = await notice.textContent();
      const advice = await page.locator('.memory-warning').textContent();
      assert(text.includes(advice), `the notice lacks the advice: ${text} | ${advice}`);
      assert(/would cut (it|them) to/.test(text), `no change proposed: ${text}`);
      const box = await notice.boundingBox();
      assert(box && box.y + box.height <= height, `the notice is below the first screen: ${JSON.stringify(box)}`);
      await page.screenshot({ path: join(ARTIFACTS, `explain-memory-notice-${width}.png`) });
      // A scenario that fits has none.
      await goto(page, '?v=1&preset=didactic');
      assert((await notice.count()) === 0, 'a notice on a scenario that fits');
    }, { viewport: { width, height } });
  }

  for (const [width, height] of [[1440, 900], [390, 844]]) {
    test(`explain: each axis card says in words why its axis is exposed, and what window and contention mean, without hover (${width}x${height})`, async ({ page }) => {
      await goto(page, '?v=1&preset=didactic');
      // The figures the words are computed from, as the report gives them.
      const dp = await page.evaluate(() => Object.fromEntries(
        [...document.querySelectorAll('.axis-card.dp [data-run="current"][data-metric]')]
          .map((e) => [e.dataset.metric.split('.').pop(), Number(e.dataset.value)])));
      const reading = page.locator('.axis-reading[data-axis="dp"]');
      await reading.waitFor();
      const text = await reading.textContent();
      // DP's window is longer than its traffic on this preset, yet most of
      // it is exposed, with no contention: the card says why.
      assert(dp.window_ms > dp.comm_ms && dp.exposed_ms > 0.5 * dp.comm_ms && dp.contention_ms < 0.01,
        `the preset no longer shows the case: ${JSON.stringify(dp)}`);
      assert(text.includes('is longer than its traffic, yet it is exposed'), `no why: ${text}`);
      assert(text.includes('the window is not where the traffic is'), `no why: ${text}`);
      // The definitions are on screen (folded under a visible summary).
      const summary = page.locator('.axis-card.dp .axis-def summary');
      assert(await summary.isVisible(), 'the window definition is not visible');
      assert((await summary.textContent()).includes('last micro-batch'), await summary.textContent());
      await summary.click();
      const def = await page.locator('.axis-card.dp .axis-def').textContent();
      assert(/Window: /.test(def) && /Contention: /.test(def) && /Hidden is the share/.test(def), def);
      // Every card carries a reading of its own.
      for (const axis of ['tp', 'pp', 'dp']) {
        assert(await page.locator(`.axis-reading[data-axis="${axis}"]`).isVisible(), `${axis}: no reading`);
      }
      await page.locator('.axis-card.dp').screenshot({ path: join(ARTIFACTS, `explain-dp-card-${width}.png`) });
    }, { viewport: { width, height } });
  }

  for (const [preset, axis, others] of [['moe-didactic', 'EP', ['TP', 'PP', 'CP']], ['long-context-ring', 'CP', ['PP', 'EP']]]) {
    test(`explain: on ${preset} the ${axis} switch comes before the switches of axes it does not have, in the DOM and on screen`, async ({ page }) => {
      await goto(page, `?v=1&preset=${preset}`);
      const switches = await page.evaluate(() => [...document.querySelectorAll('fieldset.overlap [role="switch"]')]
        .map((e) => ({ name: document.querySelector(`label[for="${e.id}"]`)?.textContent?.trim() ?? '', y: e.getBoundingClientRect().y })));
      const at = (a) => switches.findIndex((s) => s.name.startsWith(`${a} overlap`));
      assert(at(axis) >= 0, `no ${axis} switch: ${JSON.stringify(switches)}`);
      for (const o of others) {
        if (at(o) >= 0) assert(at(axis) < at(o), `${axis} after ${o}: ${JSON.stringify(switches)}`);
      }
      const y = switches[at(axis)].y;
      console.log(`     ${axis} overlap switch at y ${Math.round(y)} (was 1037 on moe-didactic, 981 on long-context-ring)`);
      assert(y + 20 < 900, `the ${axis} switch is below the first screen: y ${y}`);
      // Keyboard order follows: Tab reaches it before the others.
      await page.getByRole('switch', { name: `${axis} overlap`, exact: true }).focus();
      await page.screenshot({ path: join(ARTIFACTS, `explain-own-switch-${preset}.png`) });
    }, { viewport: { width: 1440, height: 900 } });
  }

  test('explain: the copied embed code is shown for reading, as the clipboard holds it', async ({ page, context }) => {
    await goto(page, '?v=1&preset=didactic');
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(page.url()).origin });
    await page.getByRole('button', { name: 'Copy embed code' }).click();
    const shown = page.locator('textarea.embed-code-shown');
    await shown.waitFor();
    const [text, clip] = [await shown.inputValue(), await page.evaluate(() => navigator.clipboard.readText())];
    assert(text === clip && /<iframe /.test(text), `shown ${text} | clipboard ${clip}`);
    // A copied link does not leave the embed code showing.
    await page.getByRole('button', { name: 'Copy link' }).click();
    await page.waitForFunction(() => /Link copied/.test(document.querySelector('.copied')?.textContent ?? ''));
    assert((await shown.count()) === 0, 'the embed code still shows after copying the link');
  }, { viewport: { width: 1440, height: 900 } });
}
