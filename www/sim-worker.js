// The simulation worker's script (src/worker/). The page posts one "init"
// message with the URL of its wasm-bindgen JavaScript module and its compiled
// WebAssembly.Module; this imports the one and instantiates the other. The
// module's start function sees that it runs in a worker and installs the
// simulation message handler instead of mounting a page.
self.onmessage = async ({ data }) => {
  if (!data || data.type !== 'init') return;
  self.onmessage = null;
  self.overlapLabTestHooks = data.testHooks === true;
  try {
    const glue = await import(data.glue);
    await glue.default({ module_or_path: data.module });
  } catch (err) {
    postMessage({ type: 'crashed', message: `the simulation worker could not start: ${err}` });
  }
};

// A trap in the module (after a panic, or when memory runs out) ends up here:
// tell the page, which shows it and starts a new worker.
self.addEventListener('error', (event) => {
  event.preventDefault();
  postMessage({ type: 'crashed', message: String(event.message || event.error || 'the simulation worker stopped') });
});
self.addEventListener('unhandledrejection', (event) => {
  event.preventDefault();
  postMessage({ type: 'crashed', message: String(event.reason) });
});
