import { serve, launch, ready, painted } from './harness.mjs';
import { readFileSync } from 'node:fs';
const server = await serve('dist');
const browser = await launch();
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
await browser.startTracing(page, { path: '/tmp/trace.json', categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'disabled-by-default-devtools.timeline.stack'] });
await page.goto(server.url + (process.argv[2] ?? '?v=1&preset=megatron-1t'));
await ready(page); await painted(page);
await page.waitForTimeout(300);
await browser.stopTracing();
const t = JSON.parse(readFileSync('/tmp/trace.json', 'utf8'));
const ev = t.traceEvents ?? t;
for (const e of ev) {
  if ((e.name === 'Layout' || e.name === 'UpdateLayoutTree' || e.name === 'RecalculateStyles') && e.dur > 3000) {
    const st = e.args?.beginData?.stackTrace ?? e.args?.data?.stackTrace;
    console.log(e.name, (e.dur / 1000).toFixed(1), 'ms', st ? st.slice(0, 4).map((f) => f.functionName + '@' + (f.url ?? '').split('/').pop() + ':' + f.lineNumber).join(' < ') : '(no stack: rendering)');
  }
}
const tasks = ev.filter((e) => e.name === 'RunTask' && e.dur > 40000).map((e) => (e.dur / 1000).toFixed(0));
console.log('tasks over 40 ms:', tasks.join(', '));
await browser.close(); server.close();
