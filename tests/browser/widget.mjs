// Browser tests of the widget (dist/overlap-lab.js): anywidget's render with a
// stand-in model, and two <overlap-lab> elements on one page. The test pages
// are written into dist/widget-test/, a folder of their own, so the module is
// loaded from another page's folder as course material loads it. Registered
// by run.mjs; every test fails on a console error or a request leaving the
// machine.

import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

// The app's own policy (index.html): no inline script, wasm allowed, nothing
// fetched from anywhere else.
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; "
  + "img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'";

const page = (title, head, body) => `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<link rel="icon" href="data:,">
<title>${title}</title>
${head}
</head>
<body>
${body}
</body>
</html>
`;

// anywidget's model as the widget uses it: get, set, on, off, save_changes.
// Like Backbone's, set() fires change:<name> at once when the value changes.
const STAND_IN = `import widget from '../overlap-lab.js';

class Model {
  constructor(values) {
    this.values = { ...values };
    this.handlers = new Map();
    this.sets = [];
    this.saves = 0;
  }
  get(name) { return this.values[name]; }
  set(name, value) {
    const changed = this.values[name] !== value;
    this.values[name] = value;
    this.sets.push([name, value]);
    if (changed) for (const cb of [...(this.handlers.get('change:' + name) ?? [])]) cb();
  }
  on(event, cb) { this.handlers.set(event, [...(this.handlers.get(event) ?? []), cb]); }
  off(event, cb) { this.handlers.set(event, (this.handlers.get(event) ?? []).filter((f) => f !== cb)); }
  save_changes() { this.saves++; }
  listeners() { return [...this.handlers.values()].reduce((n, l) => n + l.length, 0); }
}

const model = new Model({ scenario: '?v=1&preset=contention', controls: 'overlap', theme: 'light' });
window.model = model;
window.cleanup = await widget.render({ model, el: document.getElementById('out') });
document.body.dataset.rendered = '1';
`;

const TWO = page('Two widgets',
  '<script type="module" src="../overlap-lab.js"></script>',
  `<h1>Two widgets on one page</h1>
<p>Contention, overlap switches only, light:</p>
<overlap-lab id="a" scenario="?v=1&amp;preset=contention" controls="overlap" theme="light"></overlap-lab>
<p>The didactic scenario with TP overlap off, TP switch and playback, dark:</p>
<overlap-lab id="b" scenario="?v=1&amp;tp_overlap=0" controls="tp,playback" theme="dark"></overlap-lab>`);

/** Registers the tests; `h` carries run.mjs's helpers and paths. */
export function registerWidgetTests(test, h) {
  const { assert, close, cliReport, ARTIFACTS, DIST } = h;

  function writePages() {
    assert(existsSync(join(DIST, 'overlap-lab.js')),
      `${DIST}/overlap-lab.js is missing: build with scripts/build-site.sh`);
    const dir = join(DIST, 'widget-test');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'anywidget.html'),
      page('anywidget stand-in', '<script type="module" src="anywidget-model.js"></script>', '<div id="out"></div>'));
    writeFileSync(join(dir, 'anywidget-model.js'), STAND_IN);
    writeFileSync(join(dir, 'two.html'), TWO);
  }
  const url = (name) => `${h.serverUrl()}widget-test/${name}`;

  /** The widget's mount element inside the shadow root of `host` (a CSS selector). */
  const rootOf = (host) => `${host} .overlap-lab-root`;
  const runSeqOf = (page, host) =>
    page.$eval(rootOf(host), (el) => Number(el.dataset.runSeq ?? '0')).catch(() => 0);

  /** Waits until the widget in `host` has simulated (more than `after` times) and painted that run. */
  async function settled(page, host, after = 0) {
    await page.waitForFunction(([sel, n]) => {
      const root = document.querySelector(sel)?.shadowRoot?.querySelector('.overlap-lab-root');
      const canvas = root?.querySelector('canvas');
      const seq = Number(root?.dataset.runSeq ?? '0');
      return seq > n && canvas?.dataset.paintedSeq === String(seq);
    }, [host, after], { timeout: 60000 });
  }

  /** The current figure `name` of the widget in `host`. */
  const figure = async (page, host, name) =>
    Number(await page.getAttribute(`${host} [data-metric="${name}"][data-run="current"]`, 'data-value'));

  /** Every current figure in the widget equals the CLI's for the widget's own scenario JSON. */
  async function widgetMatchesCli(page, host) {
    const json = await page.getAttribute(`${host} [data-scenario-json]`, 'data-scenario-json');
    const report = cliReport(json);
    const figures = await page.$$eval(`${host} [data-metric][data-run="current"]`, (els) =>
      els.map((e) => [e.dataset.metric, Number(e.dataset.value)]));
    assert(figures.length >= 8, `only ${figures.length} figures in ${host}`);
    for (const [name, value] of figures) {
      const expected = name.split('.').reduce((o, k) => (o == null ? undefined : o[k]), report);
      assert(typeof expected === 'number', `the CLI report has no ${name}`);
      assert(close(value, expected), `${host} ${name}: widget shows ${value}, CLI says ${expected}`);
    }
    return { report, json: JSON.parse(json) };
  }

  /** Fails when the widget's canvas is (nearly) one colour. */
  async function canvasDrawn(page, host) {
    const stats = await page.$eval(`${host} canvas`, (c) => {
      const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
      const bg = [data[0], data[1], data[2]];
      let differ = 0;
      const colours = new Set();
      const stride = 4 * 7;
      for (let i = 0; i < data.length; i += stride) {
        const d = Math.abs(data[i] - bg[0]) + Math.abs(data[i + 1] - bg[1]) + Math.abs(data[i + 2] - bg[2]);
        if (d > 30) differ++;
        colours.add((data[i] >> 4) * 256 + (data[i + 1] >> 4) * 16 + (data[i + 2] >> 4));
      }
      return { differ: differ / (data.length / stride), colours: colours.size, w: c.width, h: c.height };
    });
    assert(stats.w > 0 && stats.h > 0, `${host}: canvas has no size`);
    assert(stats.differ > 0.03 && stats.colours >= 6,
      `${host}: canvas looks blank: ${(stats.differ * 100).toFixed(1)}% painted, ${stats.colours} colours`);
  }

  // scripts/serve.sh serves dist/ through the same server as these tests: the
  // widget must come back as a script, and a path that is not a file as 404,
  // never as the app's index.html.
  test('served site: the widget is a script and a missing file is 404, not the app', async ({ page }) => {
    const base = h.serverUrl();
    const widget = await fetch(base + 'overlap-lab.js');
    assert(widget.status === 200 && /^text\/javascript/.test(widget.headers.get('content-type')),
      `overlap-lab.js: ${widget.status} ${widget.headers.get('content-type')}`);
    assert(/export default/.test(await widget.text()), 'overlap-lab.js has no default export');
    const missing = await fetch(base + 'no-such-file.js');
    assert(missing.status === 404, `a missing file answers ${missing.status}`);
    await page.goto(base);
    await page.waitForSelector('[data-metric="step_time_ms"]');
  });

  test('widget: anywidget render draws, matches the CLI and follows the model both ways', async ({ page }) => {
    writePages();
    await page.goto(url('anywidget.html'));
    await page.waitForFunction(() => document.body.dataset.rendered === '1');
    const host = '.overlap-lab-widget';
    await settled(page, host);
    await canvasDrawn(page, host);
    const first = await widgetMatchesCli(page, host);
    assert(first.json.hardware.nodes !== undefined, 'the widget exposes no scenario JSON');
    assert((await page.locator(`${host} [role="switch"]`).count()) === 3, 'controls="overlap" did not give three switches');
    assert((await page.evaluate(() => window.model.sets.length)) === 0, 'the widget rewrote the model before any edit');

    // A change from outside (Python, another view) redraws.
    let seq = await runSeqOf(page, host);
    const before = await figure(page, host, 'step_time_ms');
    await page.evaluate(() => window.model.set('scenario', '?v=1&preset=contention&tp_overlap=0'));
    await settled(page, host, seq);
    const outside = await widgetMatchesCli(page, host);
    assert(outside.json.overlap.tp === false, 'the outside scenario did not reach the widget');
    assert(!(await page.getByRole('switch', { name: 'TP overlap' }).isChecked()), 'the TP switch did not follow the model');
    assert((await figure(page, host, 'step_time_ms')) !== before, 'the figures did not change with the scenario');
    await canvasDrawn(page, host);

    // A scenario that cannot be read entirely is explained inside the widget,
    // and the model keeps the text as given.
    seq = await runSeqOf(page, host);
    await page.evaluate(() => window.model.set('scenario', '?v=1&preset=contention&tp=banana'));
    await settled(page, host, seq);
    const named = await page.$$eval(`${host} .link-errors[role="alert"] li[data-field]`, (els) => els.map((e) => e.dataset.field));
    assert(named.includes('tp'), `the widget's alert names ${JSON.stringify(named)}, not tp`);
    await page.waitForTimeout(400);
    assert((await page.evaluate(() => window.model.get('scenario'))) === '?v=1&preset=contention&tp=banana',
      'the widget rewrote a scenario it could not read');
    seq = await runSeqOf(page, host);
    await page.evaluate(() => window.model.set('scenario', '?v=1&preset=contention&tp_overlap=0'));
    await settled(page, host, seq);

    // An edit inside is written back through model.set and save_changes.
    seq = await runSeqOf(page, host);
    await page.getByRole('switch', { name: 'DP overlap' }).click();
    await settled(page, host, seq);
    await page.waitForFunction(() => window.model.saves > 0, null, { timeout: 5000 });
    const { sets, saves, scenario } = await page.evaluate(() => ({
      sets: window.model.sets, saves: window.model.saves, scenario: window.model.get('scenario'),
    }));
    const written = sets.filter(([k]) => k === 'scenario').map(([, v]) => v);
    assert(written.length >= 4 && saves >= 1, `no write-back: sets ${JSON.stringify(sets)}, saves ${saves}`);
    assert(/^\?v=1&/.test(scenario) && /preset=contention/.test(scenario) && /dp_overlap=/.test(scenario),
      `the model holds ${scenario}`);
    const edited = await widgetMatchesCli(page, host);
    assert(edited.json.overlap.dp !== outside.json.overlap.dp, 'the DP switch did not change the scenario');
    // The text written back opens the same scenario in the full app.
    await page.goto(`${h.serverUrl()}${scenario}`);
    await page.waitForFunction(() => document.body.dataset.ready === '1');
    const full = JSON.parse(await page.getAttribute('[data-scenario-json]', 'data-scenario-json'));
    assert(JSON.stringify(full) === JSON.stringify(edited.json), 'the written query opens another scenario in the app');

    // Cleanup removes the widget and its listeners; the page keeps working.
    await page.goto(url('anywidget.html'));
    await page.waitForFunction(() => document.body.dataset.rendered === '1');
    await settled(page, host);
    await page.evaluate(() => window.cleanup());
    assert((await page.locator(host).count()) === 0, 'cleanup left the widget in the page');
    assert((await page.evaluate(() => window.model.listeners())) === 0, 'cleanup left listeners on the model');
    await page.mouse.click(5, 5);
    await page.keyboard.press('Space');
    await page.waitForTimeout(400);
  });

  test('widget: two <overlap-lab> elements on one page draw independently', async ({ page }) => {
    writePages();
    await page.goto(url('two.html'));
    await settled(page, '#a');
    await settled(page, '#b');
    await canvasDrawn(page, '#a');
    await canvasDrawn(page, '#b');
    const a = await widgetMatchesCli(page, '#a');
    const b = await widgetMatchesCli(page, '#b');
    assert(a.report.step_time_ms !== b.report.step_time_ms, 'both widgets show the same step time');
    assert((await page.locator('#a [role="switch"]').count()) === 3, '#a: controls="overlap" is not three switches');
    assert((await page.locator('#b [role="switch"]').count()) === 1, '#b: controls="tp,playback" is not one switch');
    assert((await page.locator('#b button.play').count()) === 1 && (await page.locator('#a button.play').count()) === 0,
      'playback is not where controls= put it');
    const bg = (sel) => page.$eval(sel, (e) => getComputedStyle(e).backgroundColor);
    assert((await bg('#a')) === 'rgb(255, 255, 255)', `#a (theme=light) has background ${await bg('#a')}`);
    assert((await bg('#b')) !== 'rgb(255, 255, 255)', '#b (theme=dark) has a white background');
    await page.screenshot({ path: join(ARTIFACTS, 'widget-two.png'), fullPage: true });

    // An edit in #a changes #a only, and rewrites its attribute with a change event.
    await page.evaluate(() => {
      window.changes = [];
      document.addEventListener('change', (e) => window.changes.push([e.target.id, e.detail?.scenario]));
    });
    const seqA = await runSeqOf(page, '#a');
    const seqB = await runSeqOf(page, '#b');
    const stepB = await figure(page, '#b', 'step_time_ms');
    await page.locator('#a').getByRole('switch', { name: 'PP overlap' }).click();
    await settled(page, '#a', seqA);
    await page.waitForFunction(() => /pp_overlap=/.test(document.getElementById('a').getAttribute('scenario')),
      null, { timeout: 5000 });
    await widgetMatchesCli(page, '#a');
    assert((await runSeqOf(page, '#b')) === seqB, '#b simulated again after an edit in #a');
    assert((await figure(page, '#b', 'step_time_ms')) === stepB, '#b changed after an edit in #a');
    const changes = await page.evaluate(() => window.changes);
    assert(changes.length === 1 && changes[0][0] === 'a' && /pp_overlap=/.test(changes[0][1]),
      `change events: ${JSON.stringify(changes)}`);

    // Space plays only the widget it was pressed in, and only one with playback.
    await page.locator('body').click({ position: { x: 2, y: 2 } });
    await page.keyboard.press('Space');
    await page.waitForTimeout(200);
    assert((await page.getAttribute('#b button.play', 'aria-pressed')) === 'false', 'Space on the page played #b');
    await page.locator('#b canvas').focus();
    await page.keyboard.press('Space');
    await page.waitForSelector('#b button.play[aria-pressed="true"]');
    await page.keyboard.press('Space');
    await page.waitForSelector('#b button.play[aria-pressed="false"]');

    // A new attribute from outside redraws #b only.
    const seqA2 = await runSeqOf(page, '#a');
    const seqB2 = await runSeqOf(page, '#b');
    await page.evaluate(() => document.getElementById('b').setAttribute('scenario', '?v=1&preset=contention'));
    await settled(page, '#b', seqB2);
    const b2 = await widgetMatchesCli(page, '#b');
    assert(b2.json.overlap.pp === true && b2.report.step_time_ms !== b.report.step_time_ms,
      '#b did not take the contention scenario');
    assert((await runSeqOf(page, '#a')) === seqA2, '#a simulated again after a change to #b');

    // Removing an element removes its widget; the other keeps working.
    await page.evaluate(() => document.getElementById('b').remove());
    const seqA3 = await runSeqOf(page, '#a');
    await page.locator('#a').getByRole('switch', { name: 'DP overlap' }).click();
    await settled(page, '#a', seqA3);
    await canvasDrawn(page, '#a');
    await widgetMatchesCli(page, '#a');
  });
}
