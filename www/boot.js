// Starts the app from a file rather than an inline script, so that the page's
// Content-Security-Policy can refuse every inline script. Trunk.toml's
// `pattern_script` puts the hashed names of the wasm-bindgen loader and of the
// wasm module on the <script> tag that loads this file.
const tag = document.querySelector('script[data-overlap-lab-js][data-overlap-lab-wasm]');
const { default: init } = await import(tag.dataset.overlapLabJs);
await init({ module_or_path: tag.dataset.overlapLabWasm });
dispatchEvent(new CustomEvent('TrunkApplicationStarted'));
