// Browser tests of the two operation limits (issue 14): a step within the
// figures' limit but over the timeline's shows its figures, and in the
// timeline's place a plain statement naming the control and the value that
// would draw it; the exports that need the timeline say the same.
// Registered by run.mjs (`registerLimitTests(...)`). Every wait ends in
// "finished or refused", never in a timing.

/** 1T with TP overlap on (four chunks) and twenty times its micro-batches. */
const ONE_T_TWENTY = '?v=1&preset=megatron-1t&tp_overlap=1&global_batch=61440';

/** Registers the tests; `h` carries run.mjs's helpers and paths. */
export function registerLimitTests(test, h) {
  const { assert, matchesCli, ARTIFACTS } = h;

  test('limits: a step over the timeline\'s limit shows its figures and says what would draw it; exports say why not', async ({ page }) => {
    const base = page.url().split(/[?#]/)[0];
    await page.goto(base + ONE_T_TWENTY);
    await page.waitForFunction(() => document.body.dataset.timelineRefused === '1'
      || document.body.dataset.errors === '1' || document.body.dataset.runAlert === '1', null, { timeout: 180000 });
    const outcome = await page.evaluate(() => ({
      errors: document.body.dataset.errors,
      alert: document.querySelector('.run-alert')?.textContent ?? null,
      statement: document.querySelector('.timeline .timeline-refused')?.textContent ?? null,
      simulating: document.body.dataset.simulating,
      figuresMs: document.body.dataset.figuresMs,
      json: document.querySelector('[data-scenario-json]').dataset.scenarioJson,
    }));
    assert(outcome.errors !== '1' && outcome.alert === null, `the scenario was refused: ${outcome.alert ?? 'field errors'}`);
    console.log(`    1T all TP on at 20x the batch: figures in ${outcome.figuresMs} ms in the worker, no timeline`);
    const text = outcome.statement ?? '';
    assert(/timeline would hold 62\.9 M operations/.test(text), `the statement does not say how large: ${text}`);
    assert(/limit of 3\.5 M/.test(text), `the statement does not give the limit: ${text}`);
    assert(text.includes('lower Global batch (workload.global_batch) to 3174 to draw it'),
      `the statement does not name the control and value: ${text}`);
    assert(outcome.simulating === '0', 'still marked as simulating');
    // What the user asked for stays.
    const json = JSON.parse(outcome.json);
    assert(json.workload.global_batch === 61440 && json.overlap.tp === true, `the scenario changed: ${outcome.json}`);
    // The figures are this scenario's, equal to the CLI's.
    await matchesCli(page);
    await page.locator('.timeline').scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${ARTIFACTS}/limits-no-timeline.png` });

    // The exports that need the timeline say the same instead of failing.
    for (const name of ['Download trace (JSON)', 'Download traces for HTA (zip)', 'Download SVG']) {
      await page.getByRole('button', { name }).click();
      const why = await page.locator('.trace-problem').textContent();
      assert(/needs this step's timeline/.test(why) && why.includes('Global batch (workload.global_batch) to 3174'),
        `${name}: ${why}`);
    }
    assert(await page.evaluate(() => document.body.dataset.timelineRefused) === '1');
  }, { timeout: 240000 });

  test('limits: 1T with every overlap off at ten times its batch has figures, and its timeline names Global batch', async ({ page }) => {
    // Its DP reduction and optimizer step are the same at every count, and
    // the three short runs give them equal up to rounding: the figures are
    // extrapolated (crates/core/tests/limits.rs checks they lie on one line).
    const base = page.url().split(/[?#]/)[0];
    // Its link names lanes too: with no timeline to check them against, they
    // are kept, not refused as GPUs this step would not have.
    await page.goto(`${base}?v=1&preset=megatron-1t&global_batch=30720&link_gpu=3&gpus=8-15`);
    await page.waitForFunction(() => document.body.dataset.errors === '1' || document.body.dataset.runAlert === '1'
      || document.body.dataset.timelineRefused === '1', null, { timeout: 180000 });
    const outcome = await page.evaluate(() => ({
      errors: document.body.dataset.errors,
      alert: document.querySelector('.run-alert')?.textContent ?? null,
      statement: document.querySelector('.timeline .timeline-refused')?.textContent ?? null,
    }));
    assert(outcome.errors !== '1' && outcome.alert === null, `refused: ${outcome.alert ?? 'field errors'}`);
    assert((outcome.statement ?? '').includes('lower Global batch (workload.global_batch) to'),
      `the statement does not name the control: ${outcome.statement}`);
    await matchesCli(page);
    const json = JSON.parse(await page.getAttribute('[data-scenario-json]', 'data-scenario-json'));
    assert(json.workload.global_batch === 30720, `what the user asked for changed: ${JSON.stringify(json.workload)}`);
    const linkErrors = await page.locator('.link-errors').count();
    assert(linkErrors === 0, `the link's lanes were refused: ${linkErrors ? await page.textContent('.link-errors') : ''}`);
  }, { timeout: 240000 });

  test('limits: a panic in the page itself shows the link to report over what was drawn, never a white page', async ({ page, context, problems }) => {
    await context.addInitScript(() => { globalThis.overlapLabTestHooks = true; });
    const base = page.url().split(/[?#]/)[0];
    const query = '?v=1&preset=contention&tp_chunks=2';
    await page.goto(base + query);
    await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 30000 });
    await page.evaluate(() => dispatchEvent(new Event('overlap-lab-test:page-panic')));
    await page.waitForSelector('.page-panic[role="alert"]', { timeout: 10000 });
    const notice = await page.evaluate(() => {
      const n = document.querySelector('.page-panic');
      const r = n.getBoundingClientRect();
      return { text: n.textContent, href: n.querySelector('a')?.getAttribute('href'), top: r.top, height: r.height,
        first: document.body.firstElementChild === n };
    });
    assert(/internal error/.test(notice.text) && /report this link/.test(notice.text), `the notice: ${notice.text}`);
    assert(notice.href && notice.href.endsWith(query), `the link to report is not the reader's: ${notice.href}`);
    assert(notice.first && notice.top === 0 && notice.height > 20, `the notice is not on top: ${JSON.stringify(notice)}`);
    await page.screenshot({ path: `${ARTIFACTS}/page-panic.png` });
    // The panic's own console lines are what this test asked for; nothing else may appear.
    const expected = (p) => /a test asked the page to panic|unreachable|RuntimeError/.test(p);
    const others = problems.filter((p) => !expected(p));
    problems.splice(0, problems.length, ...others);
  });
}
