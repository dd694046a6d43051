// Unit tests of the resolution logic, the documentation path filter and
// the masking formatters (npm test: vite.test.config.ts builds this file
// for Node, node --test runs it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Catalog, Descriptor } from 'toolhost-client';
import type { CompiledContract } from './codec';
import { inspectToolCompatibility, checkCatalog } from './contracts';
import { resolveToolRenderer, registrations, type RendererRegistration } from './registry';
import { toolDocumentationPath, docsHref, reasonFamily, unavailableMessage } from './presentation';
import { formatMoney, maskableQuantity, formatRate, privacy, missing, mask } from './masking.svelte';
import { contractMap } from '../generated/contract-map';
import { illFormed } from './unicode';
import { variants, initialValue } from '../renderers/schemaform';

const accept = Object.assign(() => true, { errors: null });

function contract(over: Partial<CompiledContract> = {}): CompiledContract {
  return {
    toolCode: 'demo',
    contractVersion: '1.0.0',
    schemaFingerprint: 'f'.repeat(64),
    operations: ['a', 'b'],
    ui: { kind: 'custom', componentKey: 'demo', version: '1.0.0' },
    codecs: async () => ({ input: accept, output: accept }),
    ...over,
  };
}

function descriptor(over: Partial<Descriptor> = {}): Descriptor {
  return {
    tool_code: 'demo',
    name: 'Demo',
    description: 'A demo.',
    name_i18n_key: null,
    description_i18n_key: null,
    category: 'test',
    icon_key: 'demo',
    ui: { kind: 'custom', component_key: 'demo', version: '1.0.0' },
    documentation: { path: 'tools/demo', version: '1.0.0' },
    contract_version: '1.0.0',
    implementation_version: '7.0.0',
    schema_fingerprint: 'f'.repeat(64),
    operations: [{ operation: 'b' }, { operation: 'a' }] as Descriptor['operations'],
    input_schema: {},
    output_schema: {},
    ...over,
  };
}

function catalog(items: Descriptor[], unavailable: { tool_code: string; reason: string }[] = []): Catalog {
  return { version: '2', policy: { max_batch_items: 4, client_timeout_ms: 65000 }, items, unavailable };
}

const map = { demo: { '1.0.0': contract() } };
const reg = (over: Partial<RendererRegistration> = {}): RendererRegistration => ({
  toolCode: 'demo', contractVersion: '1.0.0', componentKey: 'demo', uiVersion: '1.0.0', load: async () => ({ default: (() => {}) as never }), ...over,
});

test('inspectToolCompatibility gives each reason', () => {
  assert.equal(inspectToolCompatibility(catalog([descriptor()]), 'demo', map).ok, true);
  const reason = (c: Catalog, code = 'demo') => {
    const r = inspectToolCompatibility(c, code, map);
    return r.ok ? 'ok' : r.reason;
  };
  assert.equal(reason(catalog([]), 'demo'), 'tool_not_installed');
  assert.equal(reason(catalog([], [{ tool_code: 'demo', reason: 'engine_missing' }])), 'tool_unavailable');
  assert.equal(reason(catalog([descriptor({ contract_version: '2.0.0' })])), 'contract_not_compiled');
  assert.equal(reason(catalog([descriptor({ operations: [{ operation: 'a' }] as Descriptor['operations'] })])), 'operation_mismatch');
  assert.equal(reason(catalog([descriptor({ ui: { kind: 'custom', component_key: 'other', version: '1.0.0' } })])), 'ui_mismatch');
  assert.equal(reason(catalog([descriptor({ ui: { kind: 'custom', component_key: 'demo', version: '1.1.0' } })])), 'ui_mismatch');
  assert.equal(reason(catalog([descriptor({ ui: { kind: 'generic', component_key: 'demo', version: '1.0.0' } })])), 'ui_mismatch');
  assert.equal(reason(catalog([descriptor({ schema_fingerprint: 'e'.repeat(64) })])), 'schema_mismatch');
  // A prototype member is not a compiled contract.
  assert.equal(reason(catalog([descriptor({ tool_code: 'constructor' })]), 'constructor'), 'contract_not_compiled');
});

test('resolveToolRenderer checks the registrations', () => {
  const c = catalog([descriptor()]);
  const reason = (regs: RendererRegistration[]) => {
    const r = resolveToolRenderer(c, 'demo', regs, map);
    return r.ok ? 'ok' : r.reason;
  };
  assert.equal(reason([reg()]), 'ok');
  assert.equal(reason([]), 'renderer_missing');
  assert.equal(reason([reg(), reg()]), 'renderer_collision');
  assert.equal(reason([reg(), reg({ toolCode: 'other' })]), 'renderer_collision');
  assert.equal(reason([reg({ componentKey: 'demo2' })]), 'renderer_registration_invalid');
  assert.equal(reason([reg({ uiVersion: '2.0.0' })]), 'renderer_registration_invalid');
  // An incompatible contract is reported before the registry is asked.
  const r = resolveToolRenderer(catalog([descriptor({ schema_fingerprint: 'e'.repeat(64) })]), 'demo', [], map);
  assert.equal(r.ok ? 'ok' : r.reason, 'schema_mismatch');
});

test('the bundle registrations agree with the generated contracts', () => {
  const keys = new Set<string>();
  for (const r of registrations) {
    assert.ok(!keys.has(r.componentKey), `component key ${r.componentKey} twice`);
    keys.add(r.componentKey);
    const c = contractMap[r.toolCode]?.[r.contractVersion];
    if (!c) continue; // not in this build's export: contract_not_compiled
    assert.equal(c.ui.componentKey, r.componentKey, r.toolCode);
    assert.equal(c.ui.version, r.uiVersion, r.toolCode);
  }
});

test('the generated codecs validate the contract, strictly', async () => {
  const h = contractMap.hash?.['1.0.0'];
  if (!h) return; // codec.wasm was not built for this export
  const hash = await h.codecs();
  assert.equal(hash.input({ operation: 'digest', text: 'abc', algorithm: 'sha256' }), true);
  assert.equal(hash.input({ operation: 'digest', text: 'abc', algorithm: 'sha256', extra: 1 }), false);
  assert.equal(hash.input({ operation: 'digest', text: 'abc', algorithm: 'crc32' }), false);
  assert.equal(hash.input({ operation: 'digest', algorithm: 'sha256' }), false);
  assert.equal(hash.output({ digest: 'ab' }), true);
  assert.equal(hash.output({ digest: 'ab', more: true }), false);
  const pac = await contractMap.pac_allocator['1.0.0'].codecs();
  const holding = { instrument_id: 'A', quantity: '1', currency: 'EUR' };
  assert.equal(pac.input({ operation: 'value', currency: 'EUR', holdings: [holding] }), true);
  assert.equal(pac.input({ operation: 'value', currency: 'EUR', holdings: [{ ...holding, nested_extra: 1 }] }), false);
  assert.equal(pac.input({ operation: 'value', currency: 'eur', holdings: [holding] }), false);
  // instrument_id is at most 64 characters, counted in code points.
  assert.equal(pac.input({ operation: 'value', currency: 'EUR', holdings: [{ ...holding, instrument_id: '😀'.repeat(64) }] }), true);
  assert.equal(pac.input({ operation: 'value', currency: 'EUR', holdings: [{ ...holding, instrument_id: '😀'.repeat(65) }] }), false);
});

test('checkCatalog refuses a malformed catalogue', () => {
  assert.doesNotThrow(() => checkCatalog(catalog([descriptor()])));
  assert.throws(() => checkCatalog({ ...catalog([]), version: '1' }));
  assert.throws(() => checkCatalog(catalog([descriptor(), descriptor()])));
  assert.throws(() => checkCatalog(catalog([{ ...descriptor(), ui: undefined } as unknown as Descriptor])));
});

test('toolDocumentationPath filters documentation paths', () => {
  for (const ok of ['tools/hash', 'tools/hash/', 'guide', 'a-b/c_d/E9']) assert.equal(toolDocumentationPath(ok), ok, ok);
  for (const bad of ['', '/tools/hash', 'mkdocs/tools', 'en/tools', 'it/x', 'fr/x', 'es/x', 'tools//hash', 'tools/../x', 'tools/./x',
    'https://x.example/y', 'tools/hash?x=1', 'tools/hash#f', 'tools/h%20', 'tools/hash//', 'tools/hásh', 'tools\\hash', 42, null]) {
    assert.equal(toolDocumentationPath(bad), null, String(bad));
  }
  assert.equal(docsHref('tools/hash', 'en'), '/mkdocs/tools/hash');
  assert.equal(docsHref('tools/hash', 'it'), '/mkdocs/it/tools/hash');
});

test('reasons have a family and a message', () => {
  assert.equal(reasonFamily('tool_unavailable'), 'backend');
  assert.equal(reasonFamily('operation_mismatch'), 'interface');
  assert.equal(unavailableMessage('renderer_collision'), 'availability.rendererInvalid');
  assert.equal(unavailableMessage('schema_mismatch'), 'availability.incompatible');
});

test('masking: sensitive money and quantities hide, rates stay, missing is a dash', () => {
  privacy.hide = false;
  assert.equal(formatMoney('1234.5', 'EUR', 'sensitive'), '€1,234.50');
  assert.equal(maskableQuantity('12.5'), '12.5');
  assert.equal(formatRate('0.25'), '25%');
  assert.equal(formatMoney(undefined, 'EUR', 'public'), missing);
  privacy.hide = true;
  assert.equal(formatMoney('1234.5', 'EUR', 'sensitive'), mask);
  assert.equal(formatMoney('99', 'USD', 'public'), '$99.00');
  assert.equal(maskableQuantity('12.5'), mask);
  assert.equal(maskableQuantity(''), missing);
  assert.equal(formatRate('0.25'), '25%');
  privacy.hide = false;
});

test('illFormed finds lone surrogates, in values and member names', () => {
  assert.equal(illFormed({ operation: 'digest', text: 'abc 😀' }, ''), null);
  assert.equal(illFormed({ text: 'a\ud800b' }, ''), '/text');
  assert.equal(illFormed({ list: ['ok', { 'x/y': '\udfff' }] }, ''), '/list/1/x~1y');
  assert.equal(illFormed({ ['\ud83d']: 1 }, ''), '/\ud83d');
});

test('schemaform reads operations, kinds, defaults and bounds', () => {
  const schema = {
    oneOf: [{ $ref: '#/$defs/sort' }, { $ref: '#/$defs/build' }],
    $defs: {
      sort: {
        type: 'object', required: ['operation', 'text', 'seed'],
        properties: {
          operation: { const: 'sort' },
          text: { type: 'string' },
          order: { type: 'string', enum: ['asc', 'desc'], default: 'desc' },
          numeric: { type: 'boolean', default: true },
          seed: { type: 'integer', minimum: 2, maximum: 36 },
          shift: { type: 'integer', minimum: -25, maximum: 25 },
        },
      },
      build: {
        type: 'object', required: ['operation'],
        properties: { operation: { enum: ['build', 'parse'] }, pairs: { type: 'array', items: { type: 'object' } } },
      },
    },
  };
  const v = variants(schema);
  assert.deepEqual(v.map((x) => x.operation), ['sort', 'build', 'parse']);
  const f = Object.fromEntries(v[0].fields.map((x) => [x.name, x]));
  assert.deepEqual(Object.fromEntries(Object.entries(f).map(([k, x]) => [k, x.kind])),
    { text: 'text', order: 'enum', numeric: 'boolean', seed: 'number', shift: 'number' });
  assert.equal(initialValue(f.order), 'desc');
  assert.equal(initialValue(f.numeric), true);
  assert.equal(initialValue(f.seed), '2'); // required, 0 is below its minimum
  assert.equal(initialValue(f.shift), ''); // optional, no default
  assert.equal(v[1].fields[0].kind, 'json');
  assert.equal(initialValue(v[1].fields[0]), '');
});
