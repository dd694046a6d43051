// Unicode checks made before a scenario is encoded.

/**
 * illFormed returns the JSON pointer of the first string (value or member
 * name) of v that is not well-formed UTF-16 (a lone surrogate), or null:
 * the server refuses such text, so it is stopped before it is encoded.
 */
export function illFormed(v: unknown, at: string): string | null {
  if (typeof v === 'string') return v.isWellFormed() ? null : at;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const r = illFormed(v[i], `${at}/${i}`);
      if (r !== null) return r;
    }
    return null;
  }
  if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      const p = `${at}/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      if (!k.isWellFormed()) return p;
      const r = illFormed(x, p);
      if (r !== null) return r;
    }
  }
  return null;
}
