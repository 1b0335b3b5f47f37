// The simulation worker's script (src/serve/). Every message across the
// worker boundary is an array: the typed message as JSON text
// (crates/session/src/messages.rs), then the arrays that travel beside it.
// The page's first message is `init`, with the URL of its wasm-bindgen
// JavaScript module; its compiled WebAssembly.Module follows. This imports
// the one and instantiates the other. The module's start function sees that
// it runs in a worker and installs the simulation message handler instead
// of mounting a page.
const crashed = (message) => postMessage([JSON.stringify({ crashed: { message } })]);

self.onmessage = async ({ data }) => {
  let init;
  try {
    init = Array.isArray(data) && JSON.parse(data[0]).init;
  } catch {
    return;
  }
  if (!init) return;
  self.onmessage = null;
  self.overlapLabTestHooks = init.test_hooks === true;
  try {
    const glue = await import(init.glue);
    await glue.default({ module_or_path: data[1] });
  } catch (err) {
    crashed(`the simulation worker could not start: ${err}`);
  }
};

// A trap in the module (after a panic, or when memory runs out) ends up here:
// tell the page, which shows it and starts a new worker.
self.addEventListener('error', (event) => {
  event.preventDefault();
  crashed(String(event.message || event.error || 'the simulation worker stopped'));
});
self.addEventListener('unhandledrejection', (event) => {
  event.preventDefault();
  crashed(String(event.reason));
});
