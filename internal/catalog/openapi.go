package catalog

import (
	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/registry"
)

// OpenAPIVersion is the OpenAPI version of the generated document; 3.1
// schemas are JSON Schema 2020-12, so the tools' schemas embed as they are.
const OpenAPIVersion = "3.1.0"

// OpenAPI returns the OpenAPI document of the tools platform API as the
// snapshot's descriptors make it: one run operation per tool with a run
// API, its request body the tool's own input schema (in
// components.schemas as <id>.input, with an $id so that its local
// references resolve inside it), and the registry routes. version is the
// server's version, for info.version.
func OpenAPI(s *registry.Snapshot, version string) map[string]any {
	schemas := map[string]any{}
	paths := map[string]any{
		"/api/v1/tools": map[string]any{"get": map[string]any{
			"operationId": "listTools",
			"summary":     "Every tool's descriptor, schemas as $ref (tools.tool-list@1).",
			"responses": map[string]any{"200": jsonResponse("The tool list.",
				map[string]any{"$ref": contracts.Route + contracts.ToolListV1 + ".json"})},
		}},
		"/api/v1/tools/{id}": map[string]any{"get": map[string]any{
			"operationId": "getTool",
			"summary":     "A tool's descriptor with its schemas embedded (tools.tool@1).",
			"parameters":  []any{idParameter()},
			"responses": map[string]any{
				"200": jsonResponse("The descriptor.", map[string]any{"$ref": contracts.Route + contracts.ToolV1 + ".json"}),
				"404": problemResponse(),
			},
		}},
		"/api/v1/tools/{id}/schema": map[string]any{"get": map[string]any{
			"operationId": "getToolSchema",
			"summary":     "A tool's input and output schemas under $defs, the target of the list's $refs.",
			"parameters":  []any{idParameter()},
			"responses": map[string]any{
				"200": jsonResponse("The schema document.", map[string]any{"type": "object"}),
				"404": problemResponse(),
			},
		}},
	}
	for _, svc := range s.Services() {
		t := Tool(svc)
		if !t.API || t.Run == nil {
			continue
		}
		input := t.ID + ".input"
		schemas[input] = embedded(svc.Definition.InputSchema, contracts.SchemaEndpoint(t.ID)+"/"+contracts.SchemaInput)
		responses := map[string]any{
			"200": jsonResponse("The run finished: succeeded with its result, or failed with the tool's error (tools.run@1).",
				map[string]any{"$ref": contracts.Route + contracts.RunV1 + ".json"}),
			"400": problemResponse(), "404": problemResponse(), "413": problemResponse(),
			"422": problemResponse(), "503": problemResponse(),
		}
		if t.Execution == contracts.ExecutionJob {
			responses["202"] = map[string]any{
				"description": "The job is still queued or running: follow Location.",
				"headers":     map[string]any{"Location": map[string]any{"schema": map[string]any{"type": "string"}}},
				"content": map[string]any{"application/json": map[string]any{
					"schema": map[string]any{"$ref": contracts.Route + contracts.RunV1 + ".json"}}},
			}
		}
		op := map[string]any{
			"operationId": "run_" + t.ID,
			"summary":     t.Name,
			"description": t.Summary,
			"tags":        []any{t.Family},
			"requestBody": map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{
				"schema": map[string]any{
					"type":                 "object",
					"additionalProperties": false,
					"required":             []any{"input"},
					"properties": map[string]any{
						"input":   map[string]any{"$ref": "#/components/schemas/" + input},
						"files":   map[string]any{"type": "array"},
						"wait_ms": map[string]any{"type": "integer", "minimum": 0},
					},
				},
			}}},
			"responses": responses,
		}
		if t.Status == contracts.StatusUnavailable {
			op["description"] = t.Summary + " Unavailable on this server: " + t.StatusReason + "."
		}
		paths[t.Run.Endpoint] = map[string]any{"post": op}
	}
	return map[string]any{
		"openapi": OpenAPIVersion,
		"info": map[string]any{
			"title":       "Toolhost tools platform API",
			"version":     version,
			"description": "Generated from the live tool descriptors (ADR-027). Contracts: " + contracts.Route,
		},
		"paths":      paths,
		"components": map[string]any{"schemas": schemas},
	}
}

func idParameter() map[string]any {
	return map[string]any{"name": "id", "in": "path", "required": true, "schema": map[string]any{"type": "string"}}
}

func jsonResponse(description string, schema any) map[string]any {
	return map[string]any{"description": description,
		"content": map[string]any{"application/json": map[string]any{"schema": schema}}}
}

func problemResponse() map[string]any {
	return map[string]any{"description": "Refused before the tool ran (RFC 9457, with a stable code).",
		"content": map[string]any{"application/problem+json": map[string]any{
			"schema": map[string]any{"$ref": contracts.Route + contracts.RunRequestV1 + ".json#/$defs/problem"}}}}
}
