package catalog

import "maps"

// The discriminator keyword is OpenAPI's, not JSON Schema's: a strict
// 2020-12 validator (ajv in strict mode) refuses a schema that holds it.
// Tools may declare it (the guest SDK puts one on every operation union,
// and the seed-000 catalogue keeps the declaration as it is), so the
// ADR-027 projections labelled JSON Schema 2020-12 — a descriptor's input
// and output, the schema document — drop it, and only the OpenAPI
// projection keeps it (issue 16 item 26).

// schemaMaps are the keywords whose value maps names to schemas;
// schemaLists hold a list of schemas; schemaValues hold one schema.
var (
	schemaMaps   = map[string]bool{"properties": true, "$defs": true, "patternProperties": true, "dependentSchemas": true}
	schemaLists  = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true}
	schemaValues = map[string]bool{
		"items": true, "not": true, "if": true, "then": true, "else": true, "additionalProperties": true,
		"contains": true, "propertyNames": true, "unevaluatedItems": true, "unevaluatedProperties": true, "contentSchema": true,
	}
)

// withoutDiscriminator returns schema s without any discriminator
// keyword, at any depth. It copies only the objects on the way to one: a
// schema without a discriminator is returned as it is, so the result may
// share parts with s and callers must not modify it.
func withoutDiscriminator(s any) any {
	out, _ := stripDiscriminator(s)
	return out
}

func stripDiscriminator(s any) (any, bool) {
	m, ok := s.(map[string]any)
	if !ok {
		return s, false
	}
	var out map[string]any
	edit := func() {
		if out == nil {
			out = maps.Clone(m)
		}
	}
	if _, ok := m["discriminator"]; ok {
		edit()
		delete(out, "discriminator")
	}
	for k, v := range m {
		switch {
		case schemaValues[k]:
			if nv, changed := stripDiscriminator(v); changed {
				edit()
				out[k] = nv
			}
		case schemaLists[k]:
			l, ok := v.([]any)
			if !ok {
				continue
			}
			var nl []any
			for i, c := range l {
				if nc, changed := stripDiscriminator(c); changed {
					if nl == nil {
						nl = append([]any(nil), l...)
					}
					nl[i] = nc
				}
			}
			if nl != nil {
				edit()
				out[k] = nl
			}
		case schemaMaps[k]:
			sm, ok := v.(map[string]any)
			if !ok {
				continue
			}
			var nm map[string]any
			for name, c := range sm {
				if nc, changed := stripDiscriminator(c); changed {
					if nm == nil {
						nm = maps.Clone(sm)
					}
					nm[name] = nc
				}
			}
			if nm != nil {
				edit()
				out[k] = nm
			}
		}
	}
	if out == nil {
		return s, false
	}
	return out, true
}
