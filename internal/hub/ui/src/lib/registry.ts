// The compiled renderer registry: source-owned registrations, each naming
// its service code, contract version, component key and UI SemVer beside a
// literal lazy import. resolveToolRenderer binds a catalogue descriptor to
// its registration only when inspectToolCompatibility finds the compiled
// contract compatible and the registration agrees with that contract;
// otherwise it gives exactly one unavailable reason. There is no generic
// fallback: a service without a registration is renderer_missing.
import type { Component } from 'svelte';
import type { Catalog, Descriptor } from 'toolhost-client';
import type { CompiledContract } from './codec';
import { inspectToolCompatibility } from './contracts';
import type { UnavailableReason } from './presentation';
import { contractMap } from '../generated/contract-map';

/** What a renderer is mounted with. */
export interface RendererProps {
  descriptor: Descriptor;
  contract: CompiledContract;
  catalog: Catalog;
}

export interface RendererRegistration {
  toolCode: string;
  contractVersion: string;
  componentKey: string;
  uiVersion: string;
  load: () => Promise<{ default: Component<RendererProps> }>;
}

const pac = () => import('../renderers/PacPlannerTool.svelte');
const text = () => import('../renderers/TextTransformTool.svelte');

/** The registrations compiled into this bundle. */
export const registrations: readonly RendererRegistration[] = [
  { toolCode: 'pac_allocator', contractVersion: '1.0.0', componentKey: 'pac-allocator', uiVersion: '1.0.0', load: pac },
  { toolCode: 'hash', contractVersion: '1.0.0', componentKey: 'hash', uiVersion: '1.0.0', load: text },
  { toolCode: 'base64', contractVersion: '1.0.0', componentKey: 'base64', uiVersion: '1.0.0', load: text },
  { toolCode: 'url', contractVersion: '1.0.0', componentKey: 'url', uiVersion: '1.0.0', load: text },
  { toolCode: 'case', contractVersion: '1.0.0', componentKey: 'case', uiVersion: '1.0.0', load: text },
  { toolCode: 'slug', contractVersion: '1.0.0', componentKey: 'slug', uiVersion: '1.0.0', load: text },
  { toolCode: 'json', contractVersion: '1.0.0', componentKey: 'json', uiVersion: '1.0.0', load: text },
  { toolCode: 'beautify', contractVersion: '1.0.0', componentKey: 'beautify', uiVersion: '1.0.0', load: text },
  { toolCode: 'minify', contractVersion: '1.0.0', componentKey: 'minify', uiVersion: '1.0.0', load: text },
  // textkit (issue 19)
  { toolCode: 'text_stats', contractVersion: '1.0.0', componentKey: 'text-stats', uiVersion: '1.0.0', load: text },
  { toolCode: 'lines', contractVersion: '1.0.0', componentKey: 'lines', uiVersion: '1.0.0', load: text },
  { toolCode: 'whitespace', contractVersion: '1.0.0', componentKey: 'whitespace', uiVersion: '1.0.0', load: text },
  { toolCode: 'line_endings', contractVersion: '1.0.0', componentKey: 'line-endings', uiVersion: '1.0.0', load: text },
  { toolCode: 'unicode_normalize', contractVersion: '1.0.0', componentKey: 'unicode-normalize', uiVersion: '1.0.0', load: text },
  { toolCode: 'html_entities', contractVersion: '1.0.0', componentKey: 'html-entities', uiVersion: '1.0.0', load: text },
  { toolCode: 'string_escape', contractVersion: '1.0.0', componentKey: 'string-escape', uiVersion: '1.0.0', load: text },
  { toolCode: 'rot13', contractVersion: '1.0.0', componentKey: 'rot13', uiVersion: '1.0.0', load: text },
  { toolCode: 'lorem_ipsum', contractVersion: '1.0.0', componentKey: 'lorem-ipsum', uiVersion: '1.0.0', load: text },
  { toolCode: 'line_diff', contractVersion: '1.0.0', componentKey: 'line-diff', uiVersion: '1.0.0', load: text },
  { toolCode: 'regex', contractVersion: '1.0.0', componentKey: 'regex', uiVersion: '1.0.0', load: text },
  // ident (issue 19)
  { toolCode: 'hex', contractVersion: '1.0.0', componentKey: 'hex', uiVersion: '1.0.0', load: text },
  { toolCode: 'base32', contractVersion: '1.0.0', componentKey: 'base32', uiVersion: '1.0.0', load: text },
  { toolCode: 'base58', contractVersion: '1.0.0', componentKey: 'base58', uiVersion: '1.0.0', load: text },
  { toolCode: 'hmac', contractVersion: '1.0.0', componentKey: 'hmac', uiVersion: '1.0.0', load: text },
  { toolCode: 'checksum', contractVersion: '1.0.0', componentKey: 'checksum', uiVersion: '1.0.0', load: text },
  { toolCode: 'uuid', contractVersion: '1.0.0', componentKey: 'uuid', uiVersion: '1.0.0', load: text },
  { toolCode: 'jwt', contractVersion: '1.0.0', componentKey: 'jwt', uiVersion: '1.0.0', load: text },
  { toolCode: 'number_base', contractVersion: '1.0.0', componentKey: 'number-base', uiVersion: '1.0.0', load: text },
  { toolCode: 'unix_time', contractVersion: '1.0.0', componentKey: 'unix-time', uiVersion: '1.0.0', load: text },
  { toolCode: 'color', contractVersion: '1.0.0', componentKey: 'color', uiVersion: '1.0.0', load: text },
  { toolCode: 'semver', contractVersion: '1.0.0', componentKey: 'semver', uiVersion: '1.0.0', load: text },
  { toolCode: 'ip_cidr', contractVersion: '1.0.0', componentKey: 'ip-cidr', uiVersion: '1.0.0', load: text },
  // dataformat (issue 19)
  { toolCode: 'yaml_json', contractVersion: '1.0.0', componentKey: 'yaml-json', uiVersion: '1.0.0', load: text },
  { toolCode: 'toml_json', contractVersion: '1.0.0', componentKey: 'toml-json', uiVersion: '1.0.0', load: text },
  { toolCode: 'csv_json', contractVersion: '1.0.0', componentKey: 'csv-json', uiVersion: '1.0.0', load: text },
  { toolCode: 'query_string', contractVersion: '1.0.0', componentKey: 'query-string', uiVersion: '1.0.0', load: text },
  { toolCode: 'xml', contractVersion: '1.0.0', componentKey: 'xml', uiVersion: '1.0.0', load: text },
  { toolCode: 'json_diff', contractVersion: '1.0.0', componentKey: 'json-diff', uiVersion: '1.0.0', load: text },
  { toolCode: 'json_query', contractVersion: '1.0.0', componentKey: 'json-query', uiVersion: '1.0.0', load: text },
  // richtext (issue 19)
  { toolCode: 'markdown', contractVersion: '1.0.0', componentKey: 'markdown', uiVersion: '1.0.0', load: text },
  { toolCode: 'html_to_text', contractVersion: '1.0.0', componentKey: 'html-to-text', uiVersion: '1.0.0', load: text },
];

export type Resolution =
  | { ok: true; descriptor: Descriptor; contract: CompiledContract; registration: RendererRegistration }
  | { ok: false; reason: UnavailableReason; descriptor?: Descriptor };

/**
 * registrationProblem says what is wrong with the registration of code at
 * contractVersion among regs: renderer_missing, renderer_collision (the
 * code and version registered twice, or its component key also registered
 * by another tool), renderer_registration_invalid (it disagrees with the
 * generated contract); null for a sound one.
 */
function registrationProblem(
  regs: readonly RendererRegistration[],
  contract: CompiledContract,
): { reason: UnavailableReason } | { registration: RendererRegistration } {
  const own = regs.filter((r) => r.toolCode === contract.toolCode && r.contractVersion === contract.contractVersion);
  if (own.length === 0) return { reason: 'renderer_missing' };
  if (own.length > 1) return { reason: 'renderer_collision' };
  const reg = own[0];
  if (regs.some((r) => r.componentKey === reg.componentKey && r.toolCode !== reg.toolCode)) {
    return { reason: 'renderer_collision' };
  }
  if (reg.componentKey !== contract.ui.componentKey || reg.uiVersion !== contract.ui.version || typeof reg.load !== 'function') {
    return { reason: 'renderer_registration_invalid' };
  }
  return { registration: reg };
}

export function resolveToolRenderer(
  catalog: Catalog,
  code: string,
  regs: readonly RendererRegistration[] = registrations,
  map: Record<string, Record<string, CompiledContract>> = contractMap,
): Resolution {
  const c = inspectToolCompatibility(catalog, code, map);
  if (!c.ok) return c;
  const r = registrationProblem(regs, c.contract);
  if ('reason' in r) return { ok: false, reason: r.reason, descriptor: c.descriptor };
  return { ok: true, descriptor: c.descriptor, contract: c.contract, registration: r.registration };
}
