// Routes, documentation paths and the unavailable reasons' messages: what
// the hub card, the tool header and the diagnostics panel share.
import type { MessageKey } from './messages';

/** toolRoute is a service's stable front-end route, /tools/<tool_code>. */
export function toolRoute(code: string): string {
  return `/tools/${encodeURIComponent(code)}`;
}

const segment = /^[A-Za-z0-9_-]+$/;
const refusedFirst = new Set(['mkdocs', 'en', 'it', 'fr', 'es']);

/**
 * toolDocumentationPath returns a descriptor's documentation path when it is
 * /-separated segments of letters, digits, '-' and '_' (an optional trailing
 * slash) that does not start with mkdocs/ or a language; null otherwise (the
 * caller then shows "Documentation link unavailable").
 */
export function toolDocumentationPath(path: unknown): string | null {
  if (typeof path !== 'string' || path === '' || path.length > 512) return null;
  const body = path.endsWith('/') ? path.slice(0, -1) : path;
  const parts = body.split('/');
  if (!parts.every((p) => segment.test(p))) return null;
  if (refusedFirst.has(parts[0])) return null;
  return path;
}

/** docsHref is DocsLink's destination: /mkdocs/<path> in English, /mkdocs/<lang>/<path> otherwise. */
export function docsHref(path: string, lang: string): string {
  return lang === 'en' ? `/mkdocs/${path}` : `/mkdocs/${lang}/${path}`;
}

export type UnavailableReason =
  | 'tool_not_installed'
  | 'tool_unavailable'
  | 'contract_not_compiled'
  | 'schema_mismatch'
  | 'ui_mismatch'
  | 'operation_mismatch'
  | 'renderer_missing'
  | 'renderer_registration_invalid'
  | 'renderer_collision';

/** The family a reason counts in, in the hub's banner. */
export function reasonFamily(r: UnavailableReason): 'backend' | 'interface' {
  return r === 'tool_unavailable' || r === 'tool_not_installed' ? 'backend' : 'interface';
}

export function unavailableMessage(r: UnavailableReason): MessageKey {
  switch (r) {
    case 'tool_not_installed':
      return 'availability.notInstalled';
    case 'tool_unavailable':
      return 'availability.backendUnavailable';
    case 'contract_not_compiled':
    case 'schema_mismatch':
    case 'ui_mismatch':
    case 'operation_mismatch':
      return 'availability.incompatible';
    case 'renderer_missing':
      return 'availability.rendererMissing';
    case 'renderer_registration_invalid':
    case 'renderer_collision':
      return 'availability.rendererInvalid';
  }
}
