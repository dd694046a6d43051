// The text transforms' form, read from the live input schema (whose
// fingerprint the compiled contract matched): one variant per operation (a
// root object, or the oneOf/anyOf of a discriminated union), each with its
// fields. Only what the bundled transforms use is understood: string (enum
// or free), boolean, integer and number members, and arrays or objects
// (edited as JSON text, e.g. query_string's pairs). A field's initial value
// is the schema's default; a required number without one starts at the
// value nearest 0 its bounds allow.

type Schema = Record<string, unknown>;

export interface Field {
  name: string;
  kind: 'text' | 'line' | 'enum' | 'boolean' | 'number' | 'json';
  required: boolean;
  options: string[];
  description: string;
  defaultValue: unknown;
  minimum?: number;
  maximum?: number;
}

export interface Variant {
  operation: string;
  fields: Field[];
}

function resolve(root: Schema, s: unknown): Schema {
  const x = s as Schema;
  const ref = typeof x?.$ref === 'string' ? x.$ref : '';
  if (ref.startsWith('#/$defs/')) {
    const name = decodeURIComponent(ref.slice(8)).replaceAll('~1', '/').replaceAll('~0', '~');
    return resolve(root, (root.$defs as Record<string, unknown>)?.[name]);
  }
  return x ?? {};
}

function operationsOf(prop: Schema): string[] {
  if (typeof prop.const === 'string') return [prop.const];
  if (Array.isArray(prop.enum)) return prop.enum.filter((v): v is string => typeof v === 'string');
  return [];
}

export function variants(schema: unknown): Variant[] {
  const root = (schema ?? {}) as Schema;
  const alts = (Array.isArray(root.oneOf) ? root.oneOf : Array.isArray(root.anyOf) ? root.anyOf : [root]).map((a) => resolve(root, a));
  const out: Variant[] = [];
  for (const alt of alts) {
    const props = (alt.properties ?? {}) as Record<string, Schema>;
    const required = new Set(Array.isArray(alt.required) ? (alt.required as string[]) : []);
    const fields: Field[] = [];
    for (const [name, raw] of Object.entries(props)) {
      if (name === 'operation') continue;
      const p = resolve(root, raw);
      const enumValues = Array.isArray(p.enum) ? p.enum.filter((v): v is string => typeof v === 'string') : [];
      let kind: Field['kind'] = 'line';
      if (enumValues.length) kind = 'enum';
      else if (p.type === 'boolean') kind = 'boolean';
      else if (p.type === 'integer' || p.type === 'number') kind = 'number';
      else if (p.type === 'string' && (name === 'text' || name === 'input' || (typeof p.maxLength === 'number' && p.maxLength > 4096))) kind = 'text';
      else if (p.type === 'array' || p.type === 'object') kind = 'json';
      else if (p.type !== 'string') continue; // not a member this form can edit
      fields.push({
        name, kind, required: required.has(name), options: enumValues,
        description: typeof p.description === 'string' ? p.description : '', defaultValue: p.default,
        minimum: typeof p.minimum === 'number' ? p.minimum : undefined,
        maximum: typeof p.maximum === 'number' ? p.maximum : undefined,
      });
    }
    for (const op of operationsOf(resolve(root, props.operation))) out.push({ operation: op, fields });
  }
  return out;
}

/** initialValue is the value a field's control starts with. */
export function initialValue(f: Field): unknown {
  if (f.kind === 'boolean') return typeof f.defaultValue === 'boolean' ? f.defaultValue : false;
  if (f.kind === 'enum') return typeof f.defaultValue === 'string' ? f.defaultValue : f.required ? f.options[0] : '';
  if (f.kind === 'number') {
    if (typeof f.defaultValue === 'number') return String(f.defaultValue);
    if (!f.required) return '';
    let v = 0;
    if (f.minimum !== undefined && v < f.minimum) v = f.minimum;
    if (f.maximum !== undefined && v > f.maximum) v = f.maximum;
    return String(v);
  }
  if (f.kind === 'json') return f.defaultValue === undefined ? '' : JSON.stringify(f.defaultValue);
  return typeof f.defaultValue === 'string' ? f.defaultValue : '';
}
