// prepareToolRun and runTool: one compute item for a bound renderer. The
// parameters are checked with the compiled input codec and sent as the
// caller wrote them (never the validator's output); the item pins the live
// descriptor's contract_version, implementation_version and
// schema_fingerprint; the request gets the operation's client_timeout_ms;
// the result must repeat the pins and pass the output codec.
import { ApiError, ClientTimeout, type ComputeItem, type Descriptor, type ToolError, type ToolExecutionMetrics, type Catalog } from 'toolhost-client';
import { issuesOf, type CompiledContract } from './codec';
import { compute } from './api';
import { illFormed } from './unicode';

export type RunOutcome =
  | { kind: 'success'; result: unknown; metrics: ToolExecutionMetrics | null; serverProcessingMs: number | null }
  | { kind: 'tool_error'; error: ToolError; metrics: ToolExecutionMetrics | null; serverProcessingMs: number | null }
  | { kind: 'invalid_input'; issues: string[] }
  | { kind: 'pin_mismatch'; field: string }
  | { kind: 'invalid_output'; issues: string[] }
  | { kind: 'timeout'; ms: number }
  | { kind: 'transport'; code: string; retryable: boolean };

export interface PreparedRun {
  item: ComputeItem;
  timeoutMs: number;
}

let counter = 0;

function id(prefix: string): string {
  counter += 1;
  const rnd = crypto.getRandomValues(new Uint32Array(2));
  return `${prefix}-${Date.now().toString(36)}-${rnd[0].toString(36)}${rnd[1].toString(36)}-${counter}`;
}

export function prepareToolRun(catalog: Catalog, d: Descriptor, parameters: Record<string, unknown>): PreparedRun {
  const op = d.operations.find((o) => o.operation === parameters.operation);
  const timeoutMs = op?.client_timeout_ms ?? catalog.policy.client_timeout_ms;
  return {
    timeoutMs,
    item: {
      correlation_id: id('item'),
      tool_code: d.tool_code,
      contract_version: d.contract_version,
      implementation_version: d.implementation_version,
      schema_fingerprint: d.schema_fingerprint,
      parameters,
    },
  };
}

const pins = ['correlation_id', 'tool_code', 'contract_version', 'implementation_version', 'schema_fingerprint'] as const;

export async function runTool(
  catalog: Catalog,
  d: Descriptor,
  contract: CompiledContract,
  parameters: Record<string, unknown>,
): Promise<RunOutcome> {
  const bad = illFormed(parameters, '');
  if (bad !== null) return { kind: 'invalid_input', issues: [`${bad || '/'}: a string holds a lone surrogate (not Unicode text)`] };
  const codecs = await contract.codecs();
  if (!codecs.input(parameters)) return { kind: 'invalid_input', issues: issuesOf(codecs.input) };
  const { item, timeoutMs } = prepareToolRun(catalog, d, parameters);
  let answer;
  try {
    answer = await compute({ request_id: id('req'), items: [item] }, timeoutMs);
  } catch (err) {
    if (err instanceof ClientTimeout) return { kind: 'timeout', ms: err.timeoutMs };
    if (err instanceof ApiError) {
      const retryable = err.status === 429 || err.status === 503;
      return { kind: 'transport', code: err.code, retryable };
    }
    return { kind: 'transport', code: 'network_error', retryable: true };
  }
  const results = Array.isArray(answer?.results) ? answer.results : [];
  if (results.length !== 1) return { kind: 'pin_mismatch', field: 'results' };
  const r = results[0];
  for (const p of pins) if (r[p] !== item[p]) return { kind: 'pin_mismatch', field: p };
  const server = typeof answer.server_processing_ms === 'number' ? answer.server_processing_ms : null;
  if (r.status === 'error') return { kind: 'tool_error', error: r.error, metrics: r.metrics ?? null, serverProcessingMs: server };
  if (r.status !== 'success') return { kind: 'pin_mismatch', field: 'status' };
  if (!codecs.output(r.result)) return { kind: 'invalid_output', issues: issuesOf(codecs.output) };
  return { kind: 'success', result: r.result, metrics: r.metrics ?? null, serverProcessingMs: server };
}
