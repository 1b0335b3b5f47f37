// Browser test of the Kineto traces download: the zip holds one rank<N>.json
// per simulated GPU, each parses, and each equals what
// `overlap-lab trace --kineto DIR` writes for the page's own scenario.
// Registered by run.mjs.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { painted } from './harness.mjs';

/** Entries of a zip archive as { name, bytes }, read from its central directory. */
function unzip(buf) {
  let end = buf.length - 22;
  while (end >= 0 && buf.readUInt32LE(end) !== 0x06054b50) end--;
  if (end < 0) throw new Error('no end-of-central-directory record: not a zip');
  const count = buf.readUInt16LE(end + 10);
  let at = buf.readUInt32LE(end + 16);
  const entries = [];
  for (let i = 0; i < count; i++) {
    if (buf.readUInt32LE(at) !== 0x02014b50) throw new Error(`bad central header ${i}`);
    const method = buf.readUInt16LE(at + 10);
    const packed = buf.readUInt32LE(at + 20);
    const size = buf.readUInt32LE(at + 24);
    const [nameLen, extraLen, commentLen] = [28, 30, 32].map((o) => buf.readUInt16LE(at + o));
    const local = buf.readUInt32LE(at + 42);
    const name = buf.subarray(at + 46, at + 46 + nameLen).toString('utf8');
    const data = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const raw = buf.subarray(data, data + packed);
    const bytes = method === 8 ? inflateRawSync(raw) : method === 0 ? raw : null;
    if (bytes === null) throw new Error(`${name}: compression method ${method}`);
    if (bytes.length !== size) throw new Error(`${name}: ${bytes.length} bytes, header says ${size}`);
    entries.push({ name, bytes });
    at += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

/** Registers the test; `h` carries run.mjs's helpers and paths. */
export function registerKinetoTests(test, h) {
  const { assert, CLI, TMP } = h;

  test('export: the HTA zip holds rank<N>.json files equal to `overlap-lab trace --kineto`', async ({ page }) => {
    await painted(page);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download traces for HTA (zip)' }).click(),
    ]);
    const name = download.suggestedFilename();
    assert(name.endsWith('-kineto.zip'), `the download is named ${name}`);
    const entries = unzip(readFileSync(await download.path())).filter((e) => !e.name.endsWith('/'));
    assert(entries.length >= 1, 'the zip holds no files');

    const json = await page.getAttribute('[data-scenario-json]', 'data-scenario-json');
    const scenario = join(TMP, `kineto-${process.hrtime.bigint()}.json`);
    writeFileSync(scenario, json);
    const dir = mkdtempSync(join(TMP, 'kineto-'));
    execFileSync(CLI, ['trace', '--kineto', dir, scenario]);
    const expected = readdirSync(dir).sort();
    const got = entries.map((e) => e.name.split('/').pop()).sort();
    assert(JSON.stringify(got) === JSON.stringify(expected), `the zip holds ${got}, the CLI wrote ${expected}`);
    for (const e of entries) {
      const file = e.name.split('/').pop();
      assert(/^rank\d+\.json$/.test(file), `unexpected entry ${e.name}`);
      const trace = JSON.parse(e.bytes.toString('utf8'));
      assert(`rank${trace.distributedInfo.rank}.json` === file, `${file} says rank ${trace.distributedInfo.rank}`);
      assert(trace.traceEvents.some((ev) => ev.cat === 'kernel'), `${file} has no kernels`);
      assert(e.bytes.equals(readFileSync(join(dir, file))), `${file} differs from the CLI's`);
    }
  });
}
