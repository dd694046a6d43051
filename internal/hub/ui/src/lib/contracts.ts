// Compiled-contract compatibility (the spec's inspectToolCompatibility) and
// the runtime check of the catalogue the server answers.
import type { Catalog, Descriptor } from 'toolhost-client';
import type { CompiledContract } from './codec';
import type { UnavailableReason } from './presentation';
import { contractMap } from '../generated/contract-map';

export type Compatibility =
  | { ok: true; descriptor: Descriptor; contract: CompiledContract }
  | { ok: false; reason: UnavailableReason; descriptor?: Descriptor };

/**
 * inspectToolCompatibility resolves code in the catalogue and the generated
 * contract map: tool_not_installed when the catalogue does not know it,
 * tool_unavailable when it is only an unavailable summary,
 * contract_not_compiled when no contract of its contract_version was
 * generated, then operation_mismatch (the operation set differs),
 * ui_mismatch (ui.kind, component_key or version differ) and
 * schema_mismatch (the fingerprint differs). The operation set is compared
 * before the fingerprint, which covers the operation names too: a changed
 * operation set is the more precise diagnosis of the two.
 */
export function inspectToolCompatibility(
  catalog: Catalog,
  code: string,
  map: Record<string, Record<string, CompiledContract>> = contractMap,
): Compatibility {
  const descriptor = catalog.items.find((d) => d.tool_code === code);
  if (!descriptor) {
    const listed = catalog.unavailable.some((u) => u.tool_code === code);
    return { ok: false, reason: listed ? 'tool_unavailable' : 'tool_not_installed' };
  }
  const contract = Object.hasOwn(map, code) && Object.hasOwn(map[code], descriptor.contract_version)
    ? map[code][descriptor.contract_version]
    : undefined;
  if (!contract) return { ok: false, reason: 'contract_not_compiled', descriptor };
  const ops = descriptor.operations.map((o) => o.operation).sort();
  if (ops.length !== contract.operations.length || ops.some((o, i) => o !== contract.operations[i])) {
    return { ok: false, reason: 'operation_mismatch', descriptor };
  }
  const ui = descriptor.ui;
  if (ui.kind !== contract.ui.kind || ui.component_key !== contract.ui.componentKey || ui.version !== contract.ui.version) {
    return { ok: false, reason: 'ui_mismatch', descriptor };
  }
  if (descriptor.schema_fingerprint !== contract.schemaFingerprint) {
    return { ok: false, reason: 'schema_mismatch', descriptor };
  }
  return { ok: true, descriptor, contract };
}

function isString(v: unknown): v is string {
  return typeof v === 'string';
}

/**
 * checkCatalog validates the catalogue document at run time: version "2",
 * items with the members the hub reads, unavailable summaries. A malformed
 * document is an error, never half a hub.
 */
export function checkCatalog(doc: unknown): Catalog {
  const c = doc as Catalog;
  if (!c || typeof c !== 'object' || c.version !== '2' || !Array.isArray(c.items) || !Array.isArray(c.unavailable)) {
    throw new Error('catalogue: not a version 2 catalogue');
  }
  const seen = new Set<string>();
  for (const d of c.items) {
    const ok = d && isString(d.tool_code) && isString(d.name) && isString(d.description) && isString(d.category) &&
      isString(d.icon_key) && isString(d.contract_version) && isString(d.implementation_version) &&
      isString(d.schema_fingerprint) && d.ui && isString(d.ui.kind) && isString(d.ui.component_key) &&
      isString(d.ui.version) && d.documentation && Array.isArray(d.operations) &&
      d.operations.every((o) => o && isString(o.operation));
    if (!ok) throw new Error('catalogue: a descriptor lacks a member the hub reads');
    if (seen.has(d.tool_code)) throw new Error(`catalogue: ${d.tool_code} is listed twice`);
    seen.add(d.tool_code);
  }
  for (const u of c.unavailable) {
    if (!u || !isString(u.tool_code) || !isString(u.reason)) throw new Error('catalogue: a malformed unavailable summary');
  }
  return c;
}
