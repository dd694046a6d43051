// The shapes of the generated codecs (src/generated/, written by
// scripts/generate-contracts.mjs): Ajv standalone validators of a compiled
// contract's input and output schemas.

export interface ValidatorIssue {
  instancePath: string;
  keyword: string;
  message?: string;
}

export interface Validator {
  (data: unknown): boolean;
  errors?: ValidatorIssue[] | null;
}

/** One generated (tool_code, contract_version) contract. */
export interface CompiledContract {
  toolCode: string;
  contractVersion: string;
  schemaFingerprint: string;
  /** Sorted operation names. */
  operations: readonly string[];
  ui: { kind: string; componentKey: string; version: string };
  /** The input and output validators (a lazy chunk: the hub needs none). */
  codecs: () => Promise<Codecs>;
}

export interface Codecs {
  input: Validator;
  output: Validator;
}

/** issuesOf returns a validator's last issues as "path: message" lines. */
export function issuesOf(v: Validator): string[] {
  return (v.errors ?? []).slice(0, 32).map((e) => `${e.instancePath || '/'}: ${e.message ?? e.keyword}`);
}
