// generate-contracts: the hub's build-time generation, run by `npm run build`
// before tsc and vite. From one fresh `toolhost export` it writes, as one
// generation:
//
//   ../client/openapi.json, ../client/src/api.d.ts  the typed client's input
//       and its openapi-typescript types;
//   src/generated/validators.js (+ .d.ts)  Ajv standalone validators of the
//       input (validation) and output (serialization) schemas of each
//       compiled contract, JSON Schema 2020-12, string bounds in code points;
//   src/generated/contract-map.ts  the literal map keyed by tool_code and
//       contract_version: schema fingerprint, operations, ui, codecs.
//
// The compiled contracts are src/renderers/compiled.json's. The export is
// TOOLHOST_EXPORT_DIR's (a folder holding tool-schema-manifest.json and
// openapi.json, as `toolhost export --out DIR` writes it); without it the
// script runs `go run ./cmd/toolhost export` over TOOLHOST_TOOLS_DIR (the
// repository's wasm/ by default) into build/hub-export.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2020 from 'ajv/dist/2020.js';
import standaloneCode from 'ajv/dist/standalone/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const ui = resolve(here, '..');
const repo = resolve(ui, '../../..');
const client = resolve(ui, '../client');
const generated = join(ui, 'src/generated');

function fail(msg) {
  console.error(`generate-contracts: ${msg}`);
  process.exit(1);
}

function exportDir() {
  if (process.env.TOOLHOST_EXPORT_DIR) return resolve(process.env.TOOLHOST_EXPORT_DIR);
  const out = join(repo, 'build/hub-export');
  const tools = resolve(repo, process.env.TOOLHOST_TOOLS_DIR || 'wasm');
  const go = process.env.GO || 'go';
  console.log(`generate-contracts: ${go} run ./cmd/toolhost export --tools-dir ${tools} --out ${out}`);
  try {
    execFileSync(go, ['run', './cmd/toolhost', 'export', '--tools-dir', tools, '--out', out], {
      cwd: repo,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, PATH: `${process.env.PATH}:/usr/local/go/bin` },
    });
  } catch (err) {
    fail(`toolhost export failed (${err.message}); set TOOLHOST_EXPORT_DIR to an export folder instead`);
  }
  return out;
}

const dir = exportDir();
const manifestPath = join(dir, 'tool-schema-manifest.json');
const openapiPath = join(dir, 'openapi.json');
for (const p of [manifestPath, openapiPath]) if (!existsSync(p)) fail(`${p} is missing`);

// 1. The typed client.
copyFileSync(openapiPath, join(client, 'openapi.json'));
mkdirSync(join(client, 'src'), { recursive: true });
execFileSync(process.execPath, [join(ui, 'node_modules/openapi-typescript/bin/cli.js'), join(client, 'openapi.json'), '-o', join(client, 'src/api.d.ts')], {
  stdio: ['ignore', 'ignore', 'inherit'],
});

// 2. The manifest, checked before anything is generated from it.
const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
const body = manifest['x-tool-manifest'];
if (manifest.openapi !== '3.1.0' || !body || body.version !== '1' || !Array.isArray(body.services)) {
  fail(`${manifestPath} is not a version 1 tool schema manifest`);
}
const components = manifest.components?.schemas ?? {};
const semver = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const code = /^[a-z][a-z0-9_]{0,63}$/;
const prefix = '#/components/schemas/';
for (const s of body.services) {
  const where = `manifest entry ${JSON.stringify(s.tool_code)}`;
  if (!code.test(s.tool_code ?? '')) fail(`${where}: tool_code is not a tool code`);
  if (!semver.test(s.contract_version ?? '')) fail(`${where}: contract_version is not SemVer`);
  if (!/^[0-9a-f]{64}$/.test(s.schema_fingerprint ?? '')) fail(`${where}: schema_fingerprint is not SHA-256 hex`);
  if (!Array.isArray(s.operations) || s.operations.length === 0 || new Set(s.operations).size !== s.operations.length) {
    fail(`${where}: operations must be a nonempty list of distinct names`);
  }
  if (typeof s.ui?.kind !== 'string' || typeof s.ui?.component_key !== 'string' || !semver.test(s.ui?.version ?? '')) {
    fail(`${where}: ui needs kind, component_key and a SemVer version`);
  }
  for (const r of [s.validation_schema, s.serialization_schema]) {
    const ref = r?.$ref ?? '';
    if (!ref.startsWith(prefix) || !(unpointer(ref.slice(prefix.length)) in components)) fail(`${where}: ${ref} does not resolve`);
  }
}

function unpointer(seg) {
  return decodeURIComponent(seg).replaceAll('~1', '/').replaceAll('~0', '~');
}

// selfContained returns the component named root as one schema document:
// every component it references, transitively, under $defs (keyed by its
// component name) and each reference rewritten to point there.
const annotations = new Set(['description', 'title', 'examples', 'default', 'deprecated', 'readOnly', 'writeOnly', '$comment', 'discriminator']);
const nameMaps = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);

function selfContained(root) {
  const defs = {};
  // The annotations are dropped: they do not change what validates, and
  // they are most of the bytes. Members of a name-keyed map (properties,
  // $defs) are names, not keywords, and stay.
  const rewrite = (v, names = false) => {
    if (Array.isArray(v)) return v.map((x) => rewrite(x));
    if (v === null || typeof v !== 'object') return v;
    const out = {};
    for (const [k, x] of Object.entries(v)) {
      if (names) {
        out[k] = rewrite(x);
      } else if (annotations.has(k)) {
        continue;
      } else if (nameMaps.has(k)) {
        out[k] = rewrite(x, true);
      } else if (k === '$ref' && typeof x === 'string' && x.startsWith(prefix)) {
        const name = unpointer(x.slice(prefix.length));
        if (!(name in components)) fail(`${root}: ${x} does not resolve`);
        if (!(name in defs)) {
          defs[name] = true; // claimed before the walk: cycles end here
          const d = rewrite(components[name]);
          if (d && typeof d === 'object') delete d.$schema;
          defs[name] = d;
        }
        out[k] = '#/$defs/' + name.replaceAll('~', '~0').replaceAll('/', '~1');
      } else if (k === '$schema' && v !== components[root]) {
        continue;
      } else {
        out[k] = rewrite(x);
      }
    }
    return out;
  };
  const doc = rewrite(components[root]);
  if (typeof doc === 'boolean') return doc;
  doc.$schema = 'https://json-schema.org/draft/2020-12/schema';
  if (Object.keys(defs).length) doc.$defs = { ...(doc.$defs ?? {}), ...defs };
  return doc;
}

// 3. The compiled contracts.
const wanted = JSON.parse(readFileSync(join(ui, 'src/renderers/compiled.json'), 'utf8')).contracts;
const ajv = new Ajv2020({ code: { source: true, esm: true }, strict: false, allErrors: false, validateFormats: false, unicodeRegExp: true });
const entries = [];
const exportsMap = {};
for (const w of wanted) {
  const s = body.services.find((x) => x.tool_code === w.tool_code && x.contract_version === w.contract_version);
  if (!s) {
    console.warn(`generate-contracts: warning: ${w.tool_code} ${w.contract_version} is not in the export (are its modules built? make wasm): not compiled in`);
    continue;
  }
  const id = `${w.tool_code}_v${w.contract_version.replace(/[^0-9A-Za-z]/g, '_')}`;
  const inName = unpointer(s.validation_schema.$ref.slice(prefix.length));
  const outName = unpointer(s.serialization_schema.$ref.slice(prefix.length));
  ajv.addSchema(selfContained(inName), `${id}_input`);
  ajv.addSchema(selfContained(outName), `${id}_output`);
  exportsMap[`${id}_input`] = `${id}_input`;
  exportsMap[`${id}_output`] = `${id}_output`;
  entries.push({ id, s });
}

// Ajv's standalone code requires its runtime helpers CommonJS-style; the
// bundle is ESM, so each require becomes an import.
let source = standaloneCode(ajv, exportsMap);
const runtimes = new Map();
source = source.replace(/require\("(ajv\/dist\/runtime\/[A-Za-z0-9_]+)"\)\.default/g, (_, mod) => {
  if (!runtimes.has(mod)) runtimes.set(mod, `__runtime${runtimes.size}`);
  return runtimes.get(mod);
});
if (/require\(/.test(source)) fail('the standalone validators still require a module');
const imports = [...runtimes].map(([mod, name]) =>
  `import * as ${name}_ns from "${mod}.js";\nconst ${name} = ${name}_ns.default?.default ?? ${name}_ns.default;`).join('\n');
mkdirSync(generated, { recursive: true });
writeFileSync(join(generated, 'validators.js'), `// Generated by scripts/generate-contracts.mjs; do not edit.\n// @ts-nocheck\n${imports}\n${source}\n`);
writeFileSync(join(generated, 'validators.d.ts'), `// Generated by scripts/generate-contracts.mjs; do not edit.\nimport type { Validator } from '../lib/codec';\n` +
  Object.keys(exportsMap).map((n) => `export declare const ${n}: Validator;`).join('\n') + '\n');

const lines = [
  '// Generated by scripts/generate-contracts.mjs from the tool schema manifest',
  `// of toolhost ${JSON.stringify(manifest.info?.version ?? '')}; do not edit.`,
  "import type { CompiledContract } from '../lib/codec';",
  '',
  '// The validators are a chunk of their own, loaded by the first run.',
  "const load = () => import('./validators.js');",
  '',
  'export const contractMap: Record<string, Record<string, CompiledContract>> = {',
];
const byCode = new Map();
for (const e of entries) {
  if (!byCode.has(e.s.tool_code)) byCode.set(e.s.tool_code, []);
  byCode.get(e.s.tool_code).push(e);
}
for (const [c, list] of byCode) {
  lines.push(`  ${JSON.stringify(c)}: {`);
  for (const { id, s } of list) {
    lines.push(`    ${JSON.stringify(s.contract_version)}: {`,
      `      toolCode: ${JSON.stringify(s.tool_code)},`,
      `      contractVersion: ${JSON.stringify(s.contract_version)},`,
      `      schemaFingerprint: ${JSON.stringify(s.schema_fingerprint)},`,
      `      operations: ${JSON.stringify([...s.operations].sort())},`,
      `      ui: { kind: ${JSON.stringify(s.ui.kind)}, componentKey: ${JSON.stringify(s.ui.component_key)}, version: ${JSON.stringify(s.ui.version)} },`,
      `      codecs: () => load().then((v) => ({ input: v.${id}_input, output: v.${id}_output })),`,
      '    },');
  }
  lines.push('  },');
}
lines.push('};', '');
writeFileSync(join(generated, 'contract-map.ts'), lines.join('\n'));

// 4. A clean output folder for vite (emptyOutDir is off: the back end's
// dist/.gitkeep stays, so that go:embed always compiles).
const dist = resolve(ui, '../dist');
mkdirSync(dist, { recursive: true });
for (const name of readdirSync(dist)) if (name !== '.gitkeep') rmSync(join(dist, name), { recursive: true, force: true });

console.log(`generate-contracts: ${entries.length} contracts compiled in (${entries.map((e) => e.s.tool_code).join(', ')})`);
