// Browser tests of opening a measured trace (src/ui/measured.rs): traces
// written by `overlap-lab trace --kineto` for the page's own scenario,
// opened by the file picker (one gzipped) and by dropping them, are read
// in the import worker to the same figures as `overlap-lab import`, and
// drawn above the simulated step; bad files get an alert naming the file
// and the problem. Registered by run.mjs.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { painted } from './harness.mjs';

/** Registers the tests; `h` carries run.mjs's helpers and paths. */
export function registerImportTests(test, h) {
  const { assert, CLI, TMP, ARTIFACTS } = h;

  /** The page's scenario's Kineto traces, from the CLI: [{ name, bytes }]. */
  async function tracesOf(page) {
    const json = await page.getAttribute('[data-scenario-json]', 'data-scenario-json');
    const scenario = join(TMP, `import-${process.hrtime.bigint()}.json`);
    writeFileSync(scenario, json);
    const dir = mkdtempSync(join(TMP, 'import-'));
    execFileSync(CLI, ['trace', '--kineto', dir, scenario]);
    const measured = JSON.parse(execFileSync(CLI, ['import', '--json', dir], { encoding: 'utf8' }));
    const files = readdirSync(dir).sort().map((name) => ({ name, bytes: readFileSync(join(dir, name)) }));
    return { files, measured };
  }

  async function shownStep(page) {
    await page.waitForSelector('body[data-import="shown"]');
    return Number(await page.getAttribute('.measured', 'data-measured-step-ms'));
  }

  test('import: traces opened by the picker are drawn above the simulated step with the CLI\'s figures', async ({ page }) => {
    await painted(page);
    const { files, measured } = await tracesOf(page);
    // The first rank gzipped, as profilers often write them.
    const given = files.map((f, i) => i === 0
      ? { name: `${f.name}.gz`, mimeType: 'application/gzip', buffer: gzipSync(f.bytes) }
      : { name: f.name, mimeType: 'application/json', buffer: f.bytes });
    await page.setInputFiles('.trace-file', given);
    const step = await shownStep(page);
    assert(step === measured.over_ranks.step_ms,
      `the page read a step of ${step} ms, \`overlap-lab import\` ${measured.over_ranks.step_ms}`);
    const sentence = await page.textContent('.measured-sentence');
    assert(/^(They differ most in .+: measured .+, simulated .+|Measured and simulated agree within .+) \(step: measured .+, simulated .+\)\.$/.test(sentence),
      `the sentence reads: ${sentence}`);
    // The figures in two columns, a row per figure.
    const rows = await page.$$eval('.measured-figures tbody tr', (trs) =>
      trs.map((tr) => [...tr.children].map((c) => c.textContent)));
    assert(rows.length >= 9 && rows.every((r) => r.length === 3), `the table: ${JSON.stringify(rows)}`);
    assert(rows[0][0] === 'step', `the first row is ${rows[0][0]}`);
    // The picture: many shapes, and more than one colour painted.
    const rects = Number(await page.getAttribute('.measured-canvas', 'data-rects'));
    assert(rects > 50, `the picture has ${rects} shapes`);
    const colours = await page.evaluate(() => {
      const c = document.querySelector('.measured-canvas');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const seen = new Set();
      for (let i = 0; i < d.length; i += 4 * 97) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      return seen.size;
    });
    assert(colours >= 6, `the picture holds ${colours} colours`);
    // What the import could not say, and the collectives matched across the
    // two files (the pipeline's sends between the stages' first ranks).
    const notes = await page.$$eval('.measured-notes li', (lis) => lis.map((li) => li.textContent));
    assert(notes.some((n) => n.includes('found on one rank only')) && notes.some((n) => n.startsWith('Arrived last most often')),
      `the notes: ${JSON.stringify(notes)}`);
    const note = await page.textContent('.measured-note');
    assert(note.includes("read in") && note.includes(given[0].name), `the note reads: ${note}`);
    await page.locator('.measured').screenshot({ path: join(ARTIFACTS, 'measured-vs-simulated.png') });
    // A narrower window draws it again at the section's new width.
    const wide = await page.$eval('.measured-canvas', (c) => c.style.width);
    await page.setViewportSize({ width: 1000, height: 1000 });
    await page.waitForFunction((w) => {
      const now = document.querySelector('.measured-canvas').style.width;
      return now !== w && parseFloat(now) < parseFloat(w);
    }, wide);
    // Closing it takes the picture away.
    await page.getByRole('button', { name: 'Close trace' }).click();
    await page.waitForSelector('.measured-canvas', { state: 'detached' });
  }, { viewport: { width: 1400, height: 1000 } });

  test('import: a trace dropped on the section opens as the picker\'s does', async ({ page }) => {
    await painted(page);
    const { files, measured } = await tracesOf(page);
    const payload = files.map((f) => ({ name: f.name, text: f.bytes.toString('utf8') }));
    const transfer = await page.evaluateHandle((list) => {
      const dt = new DataTransfer();
      for (const f of list) dt.items.add(new File([f.text], f.name, { type: 'application/json' }));
      return dt;
    }, payload);
    await page.dispatchEvent('.measured', 'dragover', { dataTransfer: transfer });
    await page.dispatchEvent('.measured', 'drop', { dataTransfer: transfer });
    const step = await shownStep(page);
    assert(step === measured.over_ranks.step_ms, `dropped: ${step} vs ${measured.over_ranks.step_ms}`);
  });

  test('import: bad files get one alert naming the file and the problem', async ({ page }) => {
    await painted(page);
    const cases = [
      ['cut.json', Buffer.from('{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1,'), 'cut.json ends early'],
      ['photo.json', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]), 'photo.json is not JSON text'],
      ['shape.json', Buffer.from('{"traceEvents": {"not": "a list"}}'), 'shape.json is not a trace'],
      ['cpu.json', Buffer.from('{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]}'),
        'cpu.json holds no GPU kernels'],
      ['broken.json.gz', gzipSync(Buffer.from('{"traceEvents": []}')).subarray(0, 20), 'broken.json.gz is not a whole gzip file'],
    ];
    for (const [name, buffer, want] of cases) {
      await page.setInputFiles('.trace-file', { name, mimeType: 'application/json', buffer });
      await page.waitForSelector('body[data-import="refused"]');
      const text = await page.textContent('.import-alert');
      assert(text.startsWith('The trace could not be opened: ') && text.includes(want),
        `${name}: the alert reads "${text}", wanted "${want}"`);
      await page.evaluate(() => document.body.removeAttribute('data-import'));
    }
  });

  test('import: the reader\'s own rules name kernels the table does not know, as --classify does', async ({ page }) => {
    await painted(page);
    // One rank: compute on stream 7, and a kernel of a library the table
    // does not know on stream 20, half of it under the compute.
    const events = [];
    for (let i = 0; i < 4; i += 1) {
      events.push({ ph: 'X', cat: 'kernel', name: 'ampere_bf16_gemm', pid: 0, tid: 7, ts: 1000 * i, dur: 600, args: { device: 0, stream: 7 } });
      events.push({ ph: 'X', cat: 'kernel', name: 'my_a2a_dispatch_kernel', pid: 0, tid: 20, ts: 1000 * i + 300, dur: 600, args: { device: 0, stream: 20 } });
    }
    const buffer = Buffer.from(JSON.stringify({ traceEvents: events }));
    const file = join(TMP, 'own-library.json');
    writeFileSync(file, buffer);
    const rule = 'my_a2a=all_to_all:ep';
    const cli = (extra) => JSON.parse(execFileSync(CLI, ['import', '--json', ...extra, file], { encoding: 'utf8' }));
    const plain = cli([]);
    const named = cli(['--classify', rule]);
    await page.setInputFiles('.trace-file', { name: 'own-library.json', mimeType: 'application/json', buffer });
    await shownStep(page);
    const table = () => page.$$eval('.measured-figures tbody tr', (trs) => trs.map((tr) => tr.textContent).join('|'));
    const before = await table();
    const notes = () => page.$$eval('.measured-notes li', (lis) => lis.map((li) => li.textContent).join('|'));
    assert((await notes()).includes('ernel is recognised as communication'), `the notes: ${await notes()}`);
    // A bad rule is refused naming its line, and nothing is read again.
    await page.click('.classify summary');
    await page.fill('.classify-rules', `${rule}\nmy_x=teleport`);
    await page.click('.classify-apply');
    const error = await page.textContent('.classify-error');
    assert(error.includes('line 2') && error.includes('all_reduce'), `the rule's error reads: ${error}`);
    // The rule applied reads the open trace again: its communication is the CLI's.
    await page.evaluate(() => document.body.removeAttribute('data-import'));
    await page.fill('.classify-rules', rule);
    await page.click('.classify-apply');
    await shownStep(page);
    await page.waitForSelector('.classify-error', { state: 'detached' });
    const after = await table();
    assert(after !== before, `the figures did not change: ${after}`);
    assert(!(await notes()).includes('ernel is recognised as communication'), `the notes: ${await notes()}`);
    const comm = (r) => r.gpus[0].comm_ms;
    assert(comm(plain) === 0 && comm(named) > 0, `CLI comm ${comm(plain)} then ${comm(named)}`);
    const shown = Number(await page.getAttribute('.measured', 'data-measured-comm-ms'));
    assert(shown === comm(named), `the page read ${shown} ms of communication, the CLI ${comm(named)}`);
    // The link keeps the rules: opened again, the box holds them and a
    // trace is read with them from the start.
    await page.waitForFunction(() => new URLSearchParams(location.search).get('classify') !== null);
    const address = page.url();
    assert(new URL(address).searchParams.get('classify') === rule, `the link's rules: ${address}`);
    await page.goto(address);
    await painted(page);
    assert((await page.inputValue('.classify-rules')) === rule, 'the link\'s rules are not in the box');
    await page.setInputFiles('.trace-file', { name: 'own-library.json', mimeType: 'application/json', buffer });
    await shownStep(page);
    const again = Number(await page.getAttribute('.measured', 'data-measured-comm-ms'));
    assert(again === comm(named), `from the link the page read ${again} ms of communication, the CLI ${comm(named)}`);
    // A link with a bad rule says which, and keeps none.
    await page.goto(address.split('?')[0] + '?v=1&classify=' + encodeURIComponent('my_x=teleport'));
    await painted(page);
    const alert = await page.textContent('[role="alert"]');
    assert(/classify/.test(alert) && /teleport/.test(alert), `the link's error reads: ${alert}`);
    assert((await page.inputValue('.classify-rules')) === '', 'a refused rule is in the box');
  });
}
