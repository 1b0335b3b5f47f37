// Writes the widget beside a Trunk build: dist/overlap-lab.js (widget/overlap-lab.js
// with the hashed names of the app's JS, wasm and widget styles filled in) and
// dist/overlap-lab-<hash>.css (the app's stylesheet, scoped to the widget's
// shadow root). Run by scripts/build-site.sh after `trunk build`.
//
//   node widget/build.mjs [DIST]        (DIST defaults to dist)

import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const DIST = resolve(process.argv[2] ?? 'dist');

function fail(message) {
  console.error(`widget/build.mjs: ${message}`);
  process.exit(1);
}

const html = readFileSync(join(DIST, 'index.html'), 'utf8');
/** A file the page loads, named relative to dist/ ("./x" or "x"). */
function found(label, ...patterns) {
  for (const re of patterns) {
    const name = html.match(re)?.[1]?.replace(/^\.\//, '');
    if (name && existsSync(join(DIST, name))) return name;
  }
  return fail(`cannot find the app's ${label} in ${DIST}/index.html: was it built by Trunk?`);
}
const appJs = found('JS module', /data-overlap-lab-js="([^"]+)"/, /rel="modulepreload" href="([^"]+\.js)"/);
const appWasm = found('wasm', /data-overlap-lab-wasm="([^"]+)"/, /href="([^"]+_bg\.wasm)"/);
const appCss = found('stylesheet', /rel="stylesheet" href="([^"]+\.css)"/, /href="([^"]+\.css)"/);

// The page's styles speak of :root and body; inside a shadow root the host
// element takes both roles. Each colour is light-dark(light, dark), so the
// host's color-scheme picks the palette: the user's preference, or
// theme="light" / theme="dark" (below).
let css = readFileSync(join(DIST, appCss), 'utf8');
if (!/--tp:\s*light-dark\(/.test(css)) fail(`${appCss} gives --tp no light-dark() pair: the widget's theme would not follow`);
css = css.replace(/:root\b/g, ':host').replace(/\bhtml,\s*body\s*\{/g, ':host {');
css += `
/* The widget: a block that takes its content's height; theme="light" or
   theme="dark" fixes the palette (the canvas reads color-scheme too). */
:host { display: block; text-align: left; }
:host([hidden]) { display: none; }
:host([theme="light"]) { color-scheme: light; }
:host([theme="dark"]) { color-scheme: dark; }
`;
const cssHash = createHash('sha256').update(css).digest('hex').slice(0, 16);
const widgetCss = `overlap-lab-${cssHash}.css`;
for (const old of readdirSync(DIST)) {
  if (/^overlap-lab-[0-9a-f]{16}\.css$/.test(old) && old !== widgetCss) unlinkSync(join(DIST, old));
}
writeFileSync(join(DIST, widgetCss), css);

const names = { '@APP_JS@': appJs, '@APP_WASM@': appWasm, '@WIDGET_CSS@': widgetCss, '@APP_PAGE@': 'index.html' };
let js = readFileSync(join(HERE, 'overlap-lab.js'), 'utf8');
for (const [mark, name] of Object.entries(names)) {
  const quoted = `'${mark}'`;
  if (!js.includes(quoted)) fail(`widget/overlap-lab.js lacks ${quoted}`);
  js = js.replace(quoted, JSON.stringify(`./${name}`));
}
writeFileSync(join(DIST, 'overlap-lab.js'), js);
console.log(`Widget: ${join(DIST, 'overlap-lab.js')} (${appJs}, ${appWasm}, ${widgetCss})`);
