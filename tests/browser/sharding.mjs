// Browser tests of sharded data parallelism (issue 10): the FSDP and
// distributed-optimizer presets show the CLI's figures, a link carrying the
// new fields opens them, and a sharding switch that does not apply is named.
// Registered by run.mjs (`registerShardingTests(...)`).

import { ready, afterRun, painted, metric } from './harness.mjs';

/** Registers the tests; `h` carries run.mjs's helpers. */
export function registerShardingTests(test, h) {
  const { assert, canvasDrawn, matchesCli, serverUrl } = h;

  const scenarioJson = async (page) =>
    JSON.parse(await page.getAttribute('[data-scenario-json]', 'data-scenario-json'));
  const alertFields = (page) =>
    page.$$eval('.link-errors[role="alert"] li[data-field]', (els) => els.map((e) => e.dataset.field));
  async function goto(page, query) {
    await page.goto(serverUrl() + query);
    await ready(page);
    await painted(page);
  }

  for (const [preset, sharding] of [['llama3-8b-fsdp', 'full'], ['distributed-optimizer', 'optimizer']]) {
    test(`sharding: the ${preset} preset loads and matches the CLI`, async ({ page }) => {
      await afterRun(page, () => page.selectOption('#f-preset', preset));
      await painted(page);
      await canvasDrawn(page);
      const report = await matchesCli(page);
      const json = await scenarioJson(page);
      assert(json.parallel.dp_sharding === sharding, `dp_sharding is ${json.parallel.dp_sharding}`);
      assert(report.axes.dp.comm_ms > 0 && report.axes.dp.hidden > 0.5,
        `DP hides little: ${JSON.stringify(report.axes.dp)}`);
      assert((await page.inputValue('#f-parallel-dp-sharding')) === sharding, 'the DP sharding control disagrees');
    }, { timeout: 60000 });
  }

  test('sharding: a short link with grad_sync opens it and matches the CLI', async ({ page }) => {
    const query = '?v=1&preset=llama3-8b-fsdp&grad_sync=last_micro_batch';
    assert(query.length < 200, 'the link is too long');
    await goto(page, query);
    assert((await page.locator('.link-errors').count()) === 0, 'a valid link raised the alert');
    const json = await scenarioJson(page);
    assert(json.overlap.grad_sync === 'last_micro_batch', `grad_sync is ${json.overlap.grad_sync}`);
    await matchesCli(page);
  }, { timeout: 60000 });

  test('sharding: TP chunks says why it changes nothing under sequence parallelism, and it does not; so do switches of a one-GPU axis', async ({ page }) => {
    const note = () => page.locator('.field:has(#f-overlap-tp-chunks) .inert-why');
    await goto(page, '?v=1&preset=llama3-8b-fsdp');
    const said = await note().textContent();
    assert(/sequence parallelism/.test(said) && /8 ring steps/.test(said), `the note says: ${said}`);
    // Read out with the number box, as its errors are.
    const described = (await page.getAttribute('#f-overlap-tp-chunks', 'aria-describedby')).split(' ');
    assert(described.includes(await note().getAttribute('id')), `the box is described by ${described}`);
    const before = await metric(page, 'step_time_ms');
    await afterRun(page, () => page.locator('#f-overlap-tp-chunks').fill('16'));
    assert((await metric(page, 'step_time_ms')) === before, 'TP chunks changed the step after all');
    await afterRun(page, () => page.locator('#f-overlap-tp').uncheck());
    const off = await note().textContent();
    assert(/TP overlap is off/.test(off), `with TP overlap off the note says: ${off}`);
    await afterRun(page, () => page.selectOption('#f-preset', 'didactic'));
    // Every control of its three axes matters; only the controls of the
    // axes it lacks (experts, context parallelism) and of FP8 say why not.
    const notes = await page.$$eval('.inert-why', (els) => els.map((e) => e.closest('.field')?.querySelector('[id^="f-"]')?.id ?? e.id));
    const lacking = /^f-(overlap-(ep|cp|fp8-all-gather)|parallel-cp-mode|workload-moe-)/;
    assert(notes.every((id) => lacking.test(id)), `the didactic preset, where every control of its axes matters, shows a note: ${notes}`);
    assert(notes.includes('f-overlap-ep') && notes.includes('f-overlap-cp'), `EP and CP overlap do not say why they change nothing: ${notes}`);
    // Eight pipeline stages of one GPU each: TP and DP overlap move nothing.
    await afterRun(page, () => page.selectOption('#f-preset', 'zb-1.5b-24'));
    const why = (id) => page.locator(`.field:has(#${id}) .inert-why`);
    assert(/TP 1/.test(await why('f-overlap-tp').textContent()), 'TP overlap does not say why it changes nothing');
    assert(/DP 1/.test(await why('f-overlap-dp').textContent()), 'DP overlap does not say why it changes nothing');
    assert((await why('f-overlap-pp').count()) === 0, 'PP overlap, which matters here, shows a note');
    assert(/TP 1/.test(await why('f-parallel-scatter-gather').textContent()), 'scatter/gather does not say why it changes nothing');
    // Forward only: nothing to recompute for.
    await afterRun(page, () => page.selectOption('#f-preset', 'coconet-inference'));
    assert(/inference/.test(await why('f-workload-recompute').textContent()), 'recomputation does not say why it changes nothing in inference');
  }, { timeout: 60000 });

  test('sharding: grad_sync without FSDP is named with what is valid', async ({ page }) => {
    await goto(page, '?v=1&grad_sync=last_micro_batch');
    const fields = await alertFields(page);
    assert(fields.includes('grad_sync'), `the alert names ${fields.join(', ')}`);
    const text = await page.textContent('.link-errors[role="alert"]');
    assert(/dp_sharding "full"/.test(text), `the alert does not say what is valid: ${text}`);
  });
}
