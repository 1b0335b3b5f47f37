// Overlap Lab as a widget for other pages: notebooks (anywidget), MyST and
// Jupyter Book (`{anywidget}`), Quarto and plain HTML (`<overlap-lab>`).
//
// scripts/build-site.sh writes this file into dist/ as overlap-lab.js, with
// the hashed names of the app's files filled in below. Everything it loads
// (the app's JS and wasm, the widget's styles) is resolved against this
// module's own URL, so dist/ can sit in any folder of any host, offline. It
// evaluates no strings and writes no inline script or style element, so a
// Content-Security-Policy with script-src 'self' 'wasm-unsafe-eval' allows it.
//
// - `export default { render({ model, el }) }` follows anywidget's contract:
//   reads "scenario" (a share-link query string), "controls" and "theme",
//   redraws on change:scenario, and writes the user's edits back with
//   model.set("scenario", ...) and model.save_changes().
// - Importing it defines <overlap-lab scenario="?v=1&preset=contention"
//   controls="overlap" theme="light">; an edit inside rewrites the element's
//   `scenario` attribute and fires a `change` event with
//   `event.detail.scenario`.

const APP_JS = '@APP_JS@';
const APP_WASM = '@APP_WASM@';
const WIDGET_CSS = '@WIDGET_CSS@';
const APP_PAGE = '@APP_PAGE@';

const HERE = import.meta.url;
/** Tells the app's module that a widget, not its own page, started it. */
const WIDGET_MARK = Symbol.for('overlap-lab.widget');

/** This module's folder must be a real URL: the app's files are beside it. */
function beside(name) {
  if (!/^(https?|file):/.test(HERE)) {
    throw new Error(
      `overlap-lab.js was loaded from ${HERE.slice(0, 40)}…, not from its own URL, so the app's ` +
      'files beside it cannot be found. Load it by URL (in Jupyter: _esm = "https://…/overlap-lab.js", ' +
      'not a pathlib.Path, whose text anywidget would inline).');
  }
  return new URL(name, HERE).href;
}

let started = null;
/** Starts the app's wasm module once for every widget on the page. */
function start() {
  started ??= (async () => {
    globalThis[WIDGET_MARK] = true;
    const app = await import(beside(APP_JS));
    await app.default({ module_or_path: beside(APP_WASM) });
    return app;
  })();
  return started;
}

/** Says in the widget's place why it could not start (as text, never HTML). */
function showFailure(host, err) {
  const shadow = host.shadowRoot ?? host.attachShadow({ mode: 'open' });
  const p = document.createElement('p');
  p.setAttribute('role', 'alert');
  p.textContent = `Overlap Lab could not start: ${err?.message ?? err}`;
  shadow.replaceChildren(p);
  console.error('overlap-lab:', err);
}

/** Puts a widget into `host`'s shadow root, its styles there only. */
async function mountInto(host, options) {
  try {
    return await mountOnce(host, options);
  } catch (err) {
    showFailure(host, err);
    throw err;
  }
}

async function mountOnce(host, { scenario, controls, onScenario }) {
  const shadow = host.shadowRoot ?? host.attachShadow({ mode: 'open' });
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  const styled = new Promise((done) => {
    link.addEventListener('load', done, { once: true });
    link.addEventListener('error', done, { once: true });
  });
  link.href = beside(WIDGET_CSS);
  const root = document.createElement('div');
  root.className = 'overlap-lab-root';
  shadow.append(link, root);
  const [app] = await Promise.all([start(), styled]);
  const widget = app.mount_widget(root, scenario ?? '', controls ?? '', beside(APP_PAGE), onScenario);
  // The canvas follows the widget's width, which can change without the window's.
  let width = 0;
  const resized = new ResizeObserver(([entry]) => {
    const w = Math.round(entry.contentRect.width);
    if (w !== width) {
      width = w;
      widget.repaint();
    }
  });
  resized.observe(host);
  let live = true;
  return {
    widget,
    unmount() {
      if (!live) return;
      live = false;
      resized.disconnect();
      widget.unmount();
      widget.free();
      link.remove();
      root.remove();
    },
  };
}

/** anywidget's render: one widget in `el`, bound to `model`. */
async function render({ model, el }) {
  const host = document.createElement('div');
  host.className = 'overlap-lab-widget';
  const theme = () => {
    const t = model.get('theme');
    if (t) host.setAttribute('theme', t); else host.removeAttribute('theme');
  };
  theme();
  el.appendChild(host);
  let warned = false;
  const onScenario = (query) => {
    try {
      model.set('scenario', query);
      model.save_changes();
    } catch (err) {
      // A host without a kernel (a static book) may not save: the widget
      // keeps working with its own state.
      if (!warned) console.warn('overlap-lab: the host did not take the edited scenario:', err);
      warned = true;
    }
  };
  let mounted = null;
  let generation = 0;
  const mount = async () => {
    const mine = ++generation;
    mounted?.unmount();
    mounted = null;
    const m = await mountInto(host, {
      scenario: model.get('scenario'),
      controls: model.get('controls'),
      onScenario,
    });
    // Removed, or mounted again with other controls, while loading.
    if (mine !== generation) m.unmount(); else mounted = m;
  };
  const onScenarioChange = () => mounted?.widget.set_scenario(model.get('scenario') ?? '');
  const onControls = () => { mount().catch(() => {}); };
  const onTheme = () => { theme(); mounted?.widget.repaint(); };
  model.on('change:scenario', onScenarioChange);
  model.on('change:controls', onControls);
  model.on('change:theme', onTheme);
  await mount();
  return () => {
    generation++;
    model.off('change:scenario', onScenarioChange);
    model.off('change:controls', onControls);
    model.off('change:theme', onTheme);
    mounted?.unmount();
    mounted = null;
    host.remove();
  };
}

/** `<overlap-lab scenario="?v=1&..." controls="overlap" theme="light">`. */
class OverlapLabElement extends HTMLElement {
  static get observedAttributes() {
    return ['scenario', 'controls', 'theme'];
  }

  #mounted = null;
  #generation = 0;
  #writing = false;

  connectedCallback() {
    // A failure is shown inside the element (mountInto).
    this.#mount().catch(() => {});
  }

  disconnectedCallback() {
    this.#generation++;
    this.#mounted?.unmount();
    this.#mounted = null;
  }

  attributeChangedCallback(name) {
    if (!this.#mounted || this.#writing) return;
    if (name === 'scenario') this.#mounted.widget.set_scenario(this.getAttribute('scenario') ?? '');
    else if (name === 'controls') this.#mount().catch(() => {});
    // The styles follow the theme attribute; the canvas is repainted.
    else this.#mounted.widget.repaint();
  }

  /** The scenario as `overlap-lab simulate` reads it (JSON text). */
  scenarioJson() {
    return this.#mounted?.widget.scenario_json() ?? '';
  }

  async #mount() {
    const generation = ++this.#generation;
    this.#mounted?.unmount();
    this.#mounted = null;
    const scenario = this.getAttribute('scenario') ?? '';
    const mounted = await mountInto(this, {
      scenario,
      controls: this.getAttribute('controls') ?? '',
      onScenario: (query) => {
        this.#writing = true;
        try {
          this.setAttribute('scenario', query);
        } finally {
          this.#writing = false;
        }
        this.dispatchEvent(new CustomEvent('change', { detail: { scenario: query }, bubbles: true }));
      },
    });
    if (generation !== this.#generation || !this.isConnected) {
      mounted.unmount();
      return;
    }
    this.#mounted = mounted;
    // The attribute may have changed while the app was loading.
    const now = this.getAttribute('scenario') ?? '';
    if (now !== scenario) mounted.widget.set_scenario(now);
  }
}

if (!customElements.get('overlap-lab')) {
  customElements.define('overlap-lab', OverlapLabElement);
}

export default { render };
