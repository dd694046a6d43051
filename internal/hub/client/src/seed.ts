// The seed-000 envelopes of GET /api/v1/tools/catalog, POST
// /api/v1/tools/compute and GET /api/v1/tools/diagnostics. The OpenAPI
// document types these bodies as plain objects (their members follow
// internal/catalog and internal/api/read.go), so their members are named
// here. Tool parameters and results are not: they are the generated codecs'
// (the hub's contract map), never a second handwritten contract.

export interface Text {
  name: string;
  description: string;
}

export interface UIDescriptor {
  kind: string;
  component_key: string;
  version: string;
}

export interface Documentation {
  path: string;
  version: string;
}

/** An operation's effective (clamped) policy. */
export interface EffectiveOperation {
  operation: string;
  pure: boolean;
  deterministic: boolean;
  max_parameter_bytes: number;
  max_result_bytes: number;
  request_timeout_ms: number;
  client_timeout_ms: number;
  [limit: string]: unknown;
}

export interface Descriptor {
  tool_code: string;
  name: string;
  description: string;
  name_i18n_key: string | null;
  description_i18n_key: string | null;
  i18n?: Record<string, Text>;
  category: string;
  icon_key: string;
  ui: UIDescriptor;
  documentation: Documentation;
  contract_version: string;
  implementation_version: string;
  schema_fingerprint: string;
  operations: EffectiveOperation[];
  input_schema: unknown;
  output_schema: unknown;
}

export interface UnavailableSummary {
  tool_code: string;
  reason: string;
}

export interface PlatformPolicy {
  max_batch_items: number;
  client_timeout_ms: number;
  [limit: string]: unknown;
}

export interface Catalog {
  version: string;
  policy: PlatformPolicy;
  items: Descriptor[];
  unavailable: UnavailableSummary[];
}

export interface ComputeItem {
  correlation_id: string;
  tool_code: string;
  contract_version: string;
  implementation_version: string;
  schema_fingerprint: string;
  parameters: unknown;
}

export interface ComputeRequest {
  request_id: string;
  items: ComputeItem[];
}

export interface ValidationIssue {
  code?: string;
  path: (string | number)[];
  [member: string]: unknown;
}

export interface ToolError {
  code: string;
  retryable: boolean;
  message?: string;
  issues: ValidationIssue[];
  issue_count: number;
}

/** ToolExecutionMetrics: measured milliseconds, null for an unobserved phase. */
export interface ToolExecutionMetrics {
  queue_wait_ms: number | null;
  startup_ms: number | null;
  input_validation_ms: number | null;
  compute_ms: number | null;
  output_validation_ms: number | null;
  serialization_ms: number | null;
  execution_ms: number | null;
  cleanup_ms: number | null;
  total_ms: number | null;
}

interface ResultIdentity {
  correlation_id: string;
  tool_code: string;
  contract_version: string;
  implementation_version: string;
  schema_fingerprint: string;
  execution_id?: string;
  metrics?: ToolExecutionMetrics;
  resources?: unknown;
}

export interface SuccessResult extends ResultIdentity {
  status: 'success';
  result: unknown;
}

export interface ErrorResult extends ResultIdentity {
  status: 'error';
  error: ToolError;
}

export type ItemResult = SuccessResult | ErrorResult;

export interface ComputeResponse {
  request_id: string;
  results: ItemResult[];
  success_count: number;
  failed_count: number;
  server_processing_ms: number | null;
}

export interface DiagnosedService extends Descriptor {
  source: string;
  available: boolean;
  unavailable?: ToolError | null;
}

export interface RegistrationFailure {
  filename: string;
  tool_code?: string;
  reason: string;
  detail?: string;
}

export interface Diagnostics {
  scope: string;
  runtime_id: string;
  descriptors: DiagnosedService[];
  failures: RegistrationFailure[];
  capabilities: Record<string, unknown>;
  pool: Record<string, unknown>;
}

/** GET /api/v1/auth/session (docs/hub-auth.md). */
export interface Session {
  tier?: string;
  user?: string;
  expires?: string;
  [member: string]: unknown;
}
