package catalog

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/toolhost/toolhost/internal/auth"
	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/registry"
)

// OpenAPIVersion is the OpenAPI version of the generated document; 3.1
// schemas are JSON Schema 2020-12, so the tools' schemas embed as they are
// once their $defs are lifted (see OpenAPI).
const OpenAPIVersion = "3.1.0"

// contractNames are the contracts the document embeds as components.
var contractNames = []string{contracts.ToolV1, contracts.ToolListV1, contracts.RunRequestV1, contracts.RunV1, contracts.JobV1}

// OpenAPI returns the OpenAPI document of the server's HTTP API as the
// snapshot's descriptors make it, built with kin-openapi: the registry,
// run, jobs, contract, seed-000 and probe routes, one run operation per
// tool with a run API (its input and output schemas), each tool's legacy
// routes, the security schemes and the refusals with their problem schema
// and headers. version is the server's version, for info.version.
//
// Every schema is self-contained in components.schemas, so that generators
// that do not follow $id (openapi-typescript, redocly) resolve it: a
// schema's $defs are lifted into components named <schema>.<def> (a
// tool's input is <id>.input, a contract is its name), its local and
// cross-contract $refs rewritten to them, and its $id and $schema dropped
// (the document's dialect is JSON Schema 2020-12). Its cookie security
// schemes name cookies' names (defaults for the empty ones). The result is
// built afresh on each call; callers may modify it.
func OpenAPI(s *registry.Snapshot, version string, cookies Cookies) *openapi3.T {
	b := &openAPIBuilder{schemas: openapi3.Schemas{}}
	for _, n := range contractNames {
		raw, _ := contracts.Raw(n)
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			panic(fmt.Sprintf("catalog: contract %s: %v", n, err))
		}
		b.lift(n, n, doc)
	}
	doc := &openapi3.T{
		OpenAPI: OpenAPIVersion,
		Info: &openapi3.Info{
			Title:       "Toolhost tools platform API",
			Version:     version,
			Description: "Generated from the live tool descriptors (ADR-027) and the seed-000 routes. Contracts: " + contracts.Route,
		},
		Servers: openapi3.Servers{{URL: "/", Description: "The server that serves this document."}},
		Paths:   openapi3.NewPaths(),
		Components: &openapi3.Components{
			Schemas:         b.schemas,
			SecuritySchemes: securitySchemes(cookies),
			Headers:         headers(),
			Responses:       problemResponses(),
		},
	}
	b.registryPaths(doc.Paths)
	b.jobPaths(doc.Paths)
	seedPaths(doc.Paths)
	sessionPaths(doc.Paths)
	probePaths(doc.Paths)
	for _, svc := range s.Services() {
		b.toolPaths(doc.Paths, svc)
	}
	return doc
}

// openAPIBuilder collects the components as the paths name them.
type openAPIBuilder struct {
	schemas openapi3.Schemas
}

// lift adds schema doc to the components as name, its $defs (at every
// depth) as name.<def>…, with its references rewritten (liftSchema).
func (b *openAPIBuilder) lift(name, root string, doc map[string]any) {
	lifted := map[string]any{}
	liftSchema(lifted, name, root, doc)
	for n, out := range lifted {
		raw, err := json.Marshal(out)
		if err != nil {
			panic(fmt.Sprintf("catalog: schema %s: %v", n, err))
		}
		ref := &openapi3.SchemaRef{}
		if err := ref.UnmarshalJSON(raw); err != nil {
			panic(fmt.Sprintf("catalog: schema %s: %v", n, err))
		}
		b.schemas[n] = ref
	}
}

// liftSchema adds the schema document doc to schemas as name and its
// $defs (at every depth) as name.<def>…, each a deep copy with every
// reference rewritten to the components (componentRef): root is the
// component doc's local "#" pointers start from. $defs, $id and $schema
// are dropped: the components hold the definitions, and the document's
// dialect is its own. The runtime OpenAPI document and the build-time
// schema manifest both lift their schemas so.
func liftSchema(schemas map[string]any, name, root string, doc map[string]any) {
	if defs, ok := doc["$defs"].(map[string]any); ok {
		for k, d := range defs {
			if m, ok := d.(map[string]any); ok {
				liftSchema(schemas, name+"."+componentName(k), root, m)
			}
		}
	}
	out := rewrite(doc, root).(map[string]any)
	delete(out, "$defs")
	delete(out, "$id")
	delete(out, "$schema")
	schemas[name] = out
}

// rewrite returns a deep copy of the schema node n with every $ref (and
// discriminator mapping) of the document whose component is root turned
// into a components.schemas reference.
func rewrite(n any, root string) any {
	switch n := n.(type) {
	case map[string]any:
		out := make(map[string]any, len(n))
		for k, v := range n {
			switch k {
			case "$ref":
				if s, ok := v.(string); ok {
					out[k] = componentRef(s, root)
					continue
				}
			case "discriminator":
				if d, ok := v.(map[string]any); ok {
					dd := make(map[string]any, len(d))
					for dk, dv := range d {
						dd[dk] = dv
					}
					if mapping, ok := d["mapping"].(map[string]any); ok {
						mm := make(map[string]any, len(mapping))
						for mk, mv := range mapping {
							if s, ok := mv.(string); ok {
								mm[mk] = componentRef(s, root)
							}
						}
						dd["mapping"] = mm
					}
					out[k] = dd
					continue
				}
			}
			out[k] = rewrite(v, root)
		}
		return out
	case []any:
		out := make([]any, len(n))
		for i, v := range n {
			out[i] = rewrite(v, root)
		}
		return out
	default:
		return n
	}
}

// componentRef is the components.schemas reference of a schema reference
// made inside the document of component root: a local pointer
// ("#/$defs/a/$defs/b/properties/c") or a contract's relative or absolute
// URI ("tools.job.v1.json#/$defs/issue").
func componentRef(ref, root string) string {
	doc, pointer, _ := strings.Cut(ref, "#")
	if doc != "" {
		doc = strings.TrimPrefix(doc, contracts.Route)
		name, ok := strings.CutSuffix(doc, ".json")
		if !ok {
			return ref
		}
		if _, known := contracts.Raw(name); !known {
			return ref
		}
		root = name
	}
	segs := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	if pointer == "" {
		segs = nil
	}
	name := root
	for len(segs) >= 2 && segs[0] == "$defs" {
		name += "." + componentName(unescapePointer(segs[1]))
		segs = segs[2:]
	}
	out := "#/components/schemas/" + name
	if len(segs) > 0 {
		out += "/" + strings.Join(segs, "/")
	}
	return out
}

func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// componentName maps a $defs key to the characters a component name may
// hold (OpenAPI: ^[a-zA-Z0-9.\-_]+$).
func componentName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
}

// The security schemes: a bearer token (user or app token) and the
// session cookie. Every route also takes anonymous callers unless it says
// otherwise (the seed-000 routes do not).
const (
	securityBearer  = "bearerToken"
	securitySession = "sessionCookie"
	securityCookie  = "tokenCookie"
	// tokenCookie is the default of guard.Config.TokenCookie.
	tokenCookie = "ov_token"
)

// Cookies names the cookies the server reads credentials from, as the
// document's security schemes describe them: Session the browser session
// cookie (serve --session-cookie; auth.SessionCookie when empty), Token
// the account-token cookie (guard.Config.TokenCookie; "ov_token" when
// empty).
type Cookies struct {
	Session, Token string
}

func securitySchemes(cookies Cookies) openapi3.SecuritySchemes {
	if cookies.Session == "" {
		cookies.Session = auth.SessionCookie
	}
	if cookies.Token == "" {
		cookies.Token = tokenCookie
	}
	return openapi3.SecuritySchemes{
		securityBearer: {Value: &openapi3.SecurityScheme{Type: "http", Scheme: "bearer",
			Description: "A user or app token (toolhost token). A bad token is answered 401 with WWW-Authenticate."}},
		securitySession: {Value: &openapi3.SecurityScheme{Type: "apiKey", In: "cookie", Name: cookies.Session,
			Description: "A signed-in browser session."}},
		securityCookie: {Value: &openapi3.SecurityScheme{Type: "apiKey", In: "cookie", Name: cookies.Token,
			Description: "A user or app token in a cookie."}},
	}
}

// optionalSecurity lets a route take a token, a session or nobody.
func optionalSecurity() *openapi3.SecurityRequirements {
	return &openapi3.SecurityRequirements{{securityBearer: {}}, {securitySession: {}}, {securityCookie: {}}, {}}
}

// noSecurity is a route that takes no credentials (the probes, the
// contracts and this document).
func noSecurity() *openapi3.SecurityRequirements {
	return &openapi3.SecurityRequirements{{}}
}

// requiredSecurity is an authenticated account: a token or a session.
func requiredSecurity() *openapi3.SecurityRequirements {
	return &openapi3.SecurityRequirements{{securityBearer: {}}, {securitySession: {}}, {securityCookie: {}}}
}

// The response headers, in components.headers.
var headerDescriptions = map[string]string{
	"Retry-After":      "Whole seconds to wait before retrying (RFC 9110).",
	"RateLimit":        "The caller's remaining allowance in cost units of its quota class (draft-ietf-httpapi-ratelimit-headers).",
	"RateLimit-Policy": "The caller's quota policy: its allowance in cost units and its window.",
	"WWW-Authenticate": "The authentication scheme: Bearer (RFC 6750).",
	"Location":         "Where the job is followed (GET /api/v1/jobs/{id}).",
	"Deprecation":      "The route is deprecated (RFC 9745).",
	"Sunset":           "When the route goes away (RFC 8594).",
	"Link":             "The route that replaces it (rel=\"successor-version\").",
	"X-Request-Id":     "The request's id, also in the access log.",
	"ETag":             "The document's strong entity tag: it changes with the snapshot generation (send it in If-None-Match).",
	"Cache-Control":    "no-cache: a cache may store the document but revalidates it.",
}

func headers() openapi3.Headers {
	h := openapi3.Headers{}
	for name, d := range headerDescriptions {
		h[name] = &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
			Description: d, Schema: openapi3.NewStringSchema().NewRef()}}}
	}
	h["Retry-After"].Value.Schema = openapi3.NewIntegerSchema().WithMin(0).NewRef()
	return h
}

func headerRefs(names ...string) openapi3.Headers {
	h := openapi3.Headers{}
	for _, n := range names {
		h[n] = &openapi3.HeaderRef{Ref: "#/components/headers/" + n}
	}
	return h
}

// statusAnswers say what each status of a refusal means and the headers
// it carries; the codes under each come from the one table of them
// (contracts.Problems), every status of which has an entry here
// (TestProblemStatusesDescribed).
var statusAnswers = map[int]struct {
	what    string
	headers []string
}{
	http.StatusBadRequest:            {"The request is malformed: not strict JSON, not its contract, a bad multipart part.", nil},
	http.StatusUnauthorized:          {"The route needs an account, or the credentials are invalid.", []string{"WWW-Authenticate"}},
	http.StatusForbidden:             {"The caller lacks the capability the route needs, or is blocked.", nil},
	http.StatusNotFound:              {"No such tool, job, file or route.", nil},
	http.StatusMethodNotAllowed:      {"The route does not take this method; Allow lists the ones it takes.", nil},
	http.StatusRequestTimeout:        {"The body did not arrive in time.", nil},
	http.StatusConflict:              {"The job is not in a state that allows this.", nil},
	http.StatusGone:                  {"The job or its file has expired.", nil},
	http.StatusRequestEntityTooLarge: {"The body, the input or a file exceeds its limit.", nil},
	http.StatusUnsupportedMediaType:  {"The body's media type, or a file's sniffed type, is not accepted.", nil},
	http.StatusUnprocessableEntity:   {"The input does not pass the tool's input schema; the issues say where.", nil},
	http.StatusTooManyRequests:       {"A quota, throttle or capacity limit: retry after Retry-After.", []string{"Retry-After", "RateLimit", "RateLimit-Policy"}},
	http.StatusInternalServerError:   {"A bug, logged with the request id.", nil},
	http.StatusServiceUnavailable:    {"The tool is unavailable, the server is stopping or busy, or still loading its tools (a code it does not know yet): retry after Retry-After.", []string{"Retry-After"}},
	http.StatusInsufficientStorage:   {"The data folder is full; nothing was written.", nil},
}

// problemSchema is the component of the RFC 9457 problem document.
const problemSchema = "#/components/schemas/" + contracts.RunRequestV1 + ".problem"

// problemResponses are the refusal answers in components.responses: one
// per status of the problem table, its description naming the codes
// answered with it, which x-problem-codes lists.
func problemResponses() openapi3.ResponseBodies {
	r := openapi3.ResponseBodies{}
	for _, status := range contracts.ProblemStatuses() {
		a := statusAnswers[status]
		codes := contracts.CodesOf(status)
		resp := openapi3.NewResponse().WithDescription(a.what + " Codes: `" + strings.Join(codes, "`, `") + "`.").
			WithContent(openapi3.Content{"application/problem+json": openapi3.NewMediaType().WithSchemaRef(openapi3.NewSchemaRef(problemSchema, nil))})
		resp.Headers = headerRefs(a.headers...)
		resp.Extensions = map[string]any{"x-problem-codes": codes}
		r[strconv.Itoa(status)] = &openapi3.ResponseRef{Value: resp}
	}
	return r
}

// withProblems adds the refusal answers of statuses to responses.
func withProblems(r *openapi3.Responses, statuses ...int) *openapi3.Responses {
	for _, st := range statuses {
		r.Set(strconv.Itoa(st), &openapi3.ResponseRef{Ref: "#/components/responses/" + strconv.Itoa(st)})
	}
	return r
}

func schemaRef(component string) *openapi3.SchemaRef {
	return openapi3.NewSchemaRef("#/components/schemas/"+component, nil)
}

// jsonAnswer is a 2xx answer with a JSON body of schema s.
func jsonAnswer(description string, s *openapi3.SchemaRef, hdrs ...string) *openapi3.ResponseRef {
	resp := openapi3.NewResponse().WithDescription(description).WithJSONSchemaRef(s)
	resp.Headers = headerRefs(hdrs...)
	return &openapi3.ResponseRef{Value: resp}
}

func answers(status int, r *openapi3.ResponseRef) *openapi3.Responses {
	return openapi3.NewResponses(openapi3.WithStatus(status, r))
}

func pathParam(name, description string) *openapi3.ParameterRef {
	return &openapi3.ParameterRef{Value: openapi3.NewPathParameter(name).WithDescription(description).
		WithSchema(openapi3.NewStringSchema())}
}

// The run-limit headers every guarded answer carries.
var limitHeaders = []string{"RateLimit", "RateLimit-Policy"}

// cached marks a registry document's GET: its 200 carries ETag and
// Cache-Control, and a matching If-None-Match is answered 304.
func cached(op *openapi3.Operation) *openapi3.Operation {
	if ok := op.Responses.Status(200); ok != nil && ok.Value != nil {
		for n, h := range headerRefs("ETag", "Cache-Control") {
			if ok.Value.Headers == nil {
				ok.Value.Headers = openapi3.Headers{}
			}
			ok.Value.Headers[n] = h
		}
	}
	notModified := openapi3.NewResponse().WithDescription("Not modified: If-None-Match names the current ETag.")
	notModified.Headers = headerRefs("ETag", "Cache-Control")
	op.Responses.Set("304", &openapi3.ResponseRef{Value: notModified})
	op.Parameters = append(op.Parameters, &openapi3.ParameterRef{Value: openapi3.NewHeaderParameter("If-None-Match").
		WithDescription("The ETag of a copy the client holds.").WithSchema(openapi3.NewStringSchema())})
	return op
}

func (b *openAPIBuilder) registryPaths(p *openapi3.Paths) {
	id := pathParam("id", "The tool's id.")
	p.Set("/api/v1/tools", &openapi3.PathItem{Get: cached(&openapi3.Operation{
		OperationID: "listTools", Tags: []string{"registry"}, Security: optionalSecurity(),
		Summary:   "Every tool's descriptor, its schemas by reference (tools.tool-list@1).",
		Responses: withProblems(answers(200, jsonAnswer("The tool list.", schemaRef(contracts.ToolListV1))), 401),
	})})
	p.Set("/api/v1/tools/{id}", &openapi3.PathItem{Get: cached(&openapi3.Operation{
		OperationID: "getTool", Tags: []string{"registry"}, Security: optionalSecurity(),
		Summary:    "A tool's descriptor with its schemas embedded (tools.tool@1).",
		Parameters: openapi3.Parameters{id},
		Responses:  withProblems(answers(200, jsonAnswer("The descriptor.", schemaRef(contracts.ToolV1))), 401, 404, 503),
	})})
	p.Set("/api/v1/tools/{id}/schema", &openapi3.PathItem{Get: cached(&openapi3.Operation{
		OperationID: "getToolSchema", Tags: []string{"registry"}, Security: optionalSecurity(),
		Summary:    "A tool's input and output schemas under $defs, the target of the list's $refs.",
		Parameters: openapi3.Parameters{id},
		Responses: withProblems(answers(200, jsonAnswer("The schema document (JSON Schema 2020-12).",
			openapi3.NewObjectSchema().NewRef())), 401, 404, 503),
	})})
	p.Set(contracts.Route+"{name}", &openapi3.PathItem{Get: cached(&openapi3.Operation{
		OperationID: "getContract", Tags: []string{"registry"}, Security: noSecurity(),
		Summary:    "One of the JSON contracts (" + strings.Join(contractNames, ", ") + "), as application/schema+json; the .json suffix is optional.",
		Parameters: openapi3.Parameters{pathParam("name", "The contract's name, e.g. "+contracts.ToolV1+".json.")},
		Responses: withProblems(answers(200, &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription("The contract.").
			WithContent(openapi3.Content{"application/schema+json": openapi3.NewMediaType().WithSchema(openapi3.NewObjectSchema())})}), 404),
	})})
	p.Set("/openapi.json", &openapi3.PathItem{Get: cached(&openapi3.Operation{
		OperationID: "getOpenAPI", Tags: []string{"registry"}, Security: noSecurity(),
		Summary:   "This document.",
		Responses: answers(200, jsonAnswer("The OpenAPI document.", openapi3.NewObjectSchema().NewRef())),
	})})
}

// idempotencyKey is the Idempotency-Key header of a job submission: the
// same key from the same caller within 24 hours gives the first
// submission's job, answered with Idempotent-Replayed: true.
func idempotencyKey() *openapi3.ParameterRef {
	return &openapi3.ParameterRef{Value: openapi3.NewHeaderParameter("Idempotency-Key").
		WithDescription("Makes the submission idempotent: the same key from the same caller within 24 hours gives the job the first submission made (answered with Idempotent-Replayed: true), on any replica. 1 to 255 printable ASCII characters.").
		WithSchema(&openapi3.Schema{Type: &openapi3.Types{openapi3.TypeString}, MinLength: 1, MaxLength: openapi3.Ptr[uint64](255)})}
}

func (b *openAPIBuilder) jobPaths(p *openapi3.Paths) {
	job := schemaRef(contracts.JobV1)
	id := pathParam("id", "The job's id.")
	submit := openapi3.NewObjectSchema().WithProperty("type", openapi3.NewStringSchema()).
		WithProperty("input", openapi3.NewObjectSchema())
	submit.Required = []string{"type", "input"}
	submit.Description = "A job of a job type (a tool's run.job.type) with its input document."
	p.Set("/api/v1/jobs", &openapi3.PathItem{Post: &openapi3.Operation{
		OperationID: "submitJob", Tags: []string{"jobs"}, Security: optionalSecurity(),
		Summary:    "Submit a job: JSON, or multipart with its input and one part per file.",
		Parameters: openapi3.Parameters{idempotencyKey()},
		RequestBody: &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).WithContent(openapi3.Content{
			"application/json":    openapi3.NewMediaType().WithSchema(submit),
			"multipart/form-data": openapi3.NewMediaType().WithSchema(multipartSchema(nil)),
		})},
		Responses: withProblems(answers(202, jsonAnswer("The job, queued.", job, "Location", "RateLimit", "RateLimit-Policy")),
			400, 401, 403, 404, 408, 413, 415, 422, 429, 503, 507),
	}})
	p.Set("/api/v1/jobs/{id}", &openapi3.PathItem{Get: &openapi3.Operation{
		OperationID: "getJob", Tags: []string{"jobs"}, Security: optionalSecurity(),
		Summary: "A job of the caller's (tools.job@1).", Parameters: openapi3.Parameters{id},
		Responses: withProblems(answers(200, jsonAnswer("The job.", job)), 401, 404, 410, 503),
	}})
	events := openapi3.NewResponse().WithDescription("The job's state changes as server-sent events, ending when it ends.").
		WithContent(openapi3.Content{"text/event-stream": openapi3.NewMediaType().WithSchema(openapi3.NewStringSchema())})
	p.Set("/api/v1/jobs/{id}/events", &openapi3.PathItem{Get: &openapi3.Operation{
		OperationID: "jobEvents", Tags: []string{"jobs"}, Security: optionalSecurity(),
		Summary: "Follow a job (SSE).", Parameters: openapi3.Parameters{id},
		Responses: withProblems(answers(200, &openapi3.ResponseRef{Value: events}), 401, 404, 410, 503),
	}})
	file := openapi3.NewResponse().WithDescription("The file's bytes, with its media type; ranges are served.").
		WithContent(openapi3.Content{"application/octet-stream": openapi3.NewMediaType().WithSchema(
			&openapi3.Schema{Type: &openapi3.Types{openapi3.TypeString}, ContentMediaType: "application/octet-stream"})})
	expires := &openapi3.ParameterRef{Value: openapi3.NewQueryParameter("expires").WithDescription("A signed URL's expiry (Unix seconds).").WithSchema(openapi3.NewIntegerSchema())}
	sig := &openapi3.ParameterRef{Value: openapi3.NewQueryParameter("sig").WithDescription("A signed URL's signature.").WithSchema(openapi3.NewStringSchema())}
	p.Set("/api/v1/jobs/{id}/files/{name}", &openapi3.PathItem{Get: &openapi3.Operation{
		OperationID: "getJobFile", Tags: []string{"jobs"}, Security: optionalSecurity(),
		Summary:    "Download a job's file, as its owner or with a signed URL.",
		Parameters: openapi3.Parameters{id, pathParam("name", "The file's name."), expires, sig},
		Responses:  withProblems(answers(200, &openapi3.ResponseRef{Value: file}), 401, 403, 404, 410, 503),
	}})
	for _, action := range []struct{ path, id, summary string }{
		{"retry", "retryJob", "Run a failed or cancelled job again."},
		{"cancel", "cancelJob", "Cancel a queued or running job."},
	} {
		p.Set("/api/v1/jobs/{id}/"+action.path, &openapi3.PathItem{Post: &openapi3.Operation{
			OperationID: action.id, Tags: []string{"jobs"}, Security: optionalSecurity(),
			Summary: action.summary, Parameters: openapi3.Parameters{id},
			Responses: withProblems(answers(200, jsonAnswer("The job.", job)), 401, 404, 409, 410, 503),
		}})
	}
}

// multipartSchema is a multipart run or job body: an input part (the JSON
// input document), a wait_ms part, and one binary part per file.
func multipartSchema(files []contracts.FileInput) *openapi3.Schema {
	s := openapi3.NewObjectSchema().
		WithProperty("input", &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeString}, ContentMediaType: "application/json",
			Description: "The input document, as JSON."}).
		WithProperty("wait_ms", openapi3.NewIntegerSchema().WithMin(0))
	s.Required = []string{"input"}
	for _, f := range files {
		s.WithProperty(f.Name, &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeString}, ContentMediaType: "application/octet-stream",
			Description: fmt.Sprintf("A file of %s, at most %d bytes (sniffed).", strings.Join(f.Types, ", "), f.MaxBytes)})
	}
	if len(files) == 0 {
		s.AdditionalProperties = openapi3.AdditionalProperties{Schema: &openapi3.SchemaRef{Value: &openapi3.Schema{
			Type: &openapi3.Types{openapi3.TypeString}, ContentMediaType: "application/octet-stream"}}}
	}
	return s
}

// seedPaths are the seed-000 routes: authenticated accounts only, the
// seed-000 envelope (its schemas are docs/contracts.md's, not described
// here beyond an object).
func seedPaths(p *openapi3.Paths) {
	envelope := openapi3.NewObjectSchema().NewRef()
	for _, r := range []struct {
		method, path, id, summary string
	}{
		{http.MethodGet, "/api/v1/tools/catalog", "seedCatalog", "The seed-000 catalogue of every service."},
		{http.MethodPost, "/api/v1/tools/compute", "seedCompute", "A seed-000 batch of items."},
		{http.MethodGet, "/api/v1/tools/diagnostics", "seedDiagnostics", "The seed-000 diagnostics: the registry's failures and the executor."},
	} {
		op := &openapi3.Operation{OperationID: r.id, Tags: []string{"seed-000"}, Summary: r.summary, Security: requiredSecurity(),
			Responses: withProblems(answers(200, jsonAnswer("The seed-000 envelope.", envelope)), 401)}
		if r.method == http.MethodPost {
			op.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).
				WithJSONSchema(openapi3.NewObjectSchema())}
			withProblems(op.Responses, 400, 413, 415, 429, 503)
		}
		item := &openapi3.PathItem{}
		item.SetOperation(r.method, op)
		p.Set(r.path, item)
	}
}

// sessionPaths are the browser sign-in routes (docs/hub-auth.md): a user
// token exchanged for the session cookie and the readable CSRF cookie
// (Set-Cookie), who is signed in, and sign-out. A state-changing request
// made with the session cookie echoes the CSRF cookie in X-CSRF-Token.
func sessionPaths(p *openapi3.Paths) {
	who := openapi3.NewObjectSchema().
		WithProperty("tier", openapi3.NewStringSchema().WithEnum("user", "session")).
		WithProperty("user", openapi3.NewStringSchema()).
		WithProperty("expires", openapi3.NewDateTimeSchema()).
		WithProperty("csrf_token", &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeString}, Description: "The CSRF cookie's value (sign-in only): send it in X-CSRF-Token."})
	who.Required = []string{"tier", "expires"}
	body := openapi3.NewObjectSchema().WithProperty("token", &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeString}, Description: "A user token (toolhost user token)."})
	body.Required = []string{"token"}
	body.AdditionalProperties = openapi3.AdditionalProperties{Has: new(bool)}
	p.Set("/api/v1/auth/session", &openapi3.PathItem{
		Post: &openapi3.Operation{OperationID: "signIn", Tags: []string{"session"}, Security: noSecurity(),
			Summary:     "Sign a browser in with a user token: sets the session cookie (HttpOnly, SameSite=Strict) and the CSRF cookie.",
			RequestBody: &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).WithJSONSchema(body)},
			Responses:   withProblems(answers(200, jsonAnswer("Signed in.", who.NewRef())), 400, 401, 403, 429, 503)},
		Get: &openapi3.Operation{OperationID: "session", Tags: []string{"session"}, Security: &openapi3.SecurityRequirements{{securitySession: {}}},
			Summary:   "Who the session cookie signs in.",
			Responses: withProblems(answers(200, jsonAnswer("The session's caller.", who.NewRef())), 401, 503)},
		Delete: &openapi3.Operation{OperationID: "signOut", Tags: []string{"session"}, Security: &openapi3.SecurityRequirements{{securitySession: {}}, {}},
			Summary: "Sign out: the session is deleted and both cookies cleared (204 also without a session). Needs X-CSRF-Token.",
			Parameters: openapi3.Parameters{{Value: openapi3.NewHeaderParameter("X-CSRF-Token").
				WithDescription("The CSRF cookie's value, for a signed-in session.").WithSchema(openapi3.NewStringSchema())}},
			Responses: withProblems(openapi3.NewResponses(openapi3.WithStatus(204, &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription("Signed out.")})), 403, 503)},
	})
}

func probePaths(p *openapi3.Paths) {
	status := openapi3.NewObjectSchema().WithProperty("status", openapi3.NewStringSchema()).NewRef()
	p.Set("/healthz", &openapi3.PathItem{Get: &openapi3.Operation{OperationID: "healthz", Tags: []string{"probes"}, Security: noSecurity(),
		Summary: "Liveness.", Responses: answers(200, jsonAnswer("Alive.", status))}})
	p.Set("/readyz", &openapi3.PathItem{Get: &openapi3.Operation{OperationID: "readyz", Tags: []string{"probes"}, Security: noSecurity(),
		Summary:   "Readiness: 503 while starting (the tools folder's first scan: modules_total, modules_ready), while draining, when the data folder is full, or while a named check fails (the store, Redis).",
		Responses: withProblems(answers(200, jsonAnswer("Ready.", openapi3.NewObjectSchema().NewRef())), 503)}})
}

// toolPaths adds svc's schemas and, when it has a run API, its run
// operation and legacy routes.
func (b *openAPIBuilder) toolPaths(p *openapi3.Paths, svc *registry.Service) {
	t := Tool(svc)
	if !t.API || t.Run == nil {
		return
	}
	input, output := t.ID+".input", t.ID+".output"
	// The input an API caller sends (the descriptor's: a job tool's
	// without operation and required files, issue 16 item 7).
	if m, ok := apiInput(svc, svc.Definition.InputSchema).(map[string]any); ok {
		b.lift(input, input, m)
	}
	if m, ok := svc.Definition.OutputSchema.(map[string]any); ok {
		b.lift(output, output, m)
	}
	// The run answer: tools.run@1 with this tool's output.
	result := &openapi3.Schema{AllOf: openapi3.SchemaRefs{schemaRef(contracts.RunV1),
		openapi3.NewObjectSchema().WithPropertyRef("output", schemaRef(output)).NewRef()}}
	responses := withProblems(answers(200, jsonAnswer(
		"The run finished: succeeded with its output, or failed with the tool's error (tools.run@1).", result.NewRef(), limitHeaders...)),
		400, 401, 403, 404, 408, 413, 415, 422, 429, 503)
	if t.Execution == contracts.ExecutionJob {
		responses.Set("202", jsonAnswer("The job is still queued or running: follow Location.", schemaRef(contracts.RunV1), "Location", "RateLimit", "RateLimit-Policy"))
		withProblems(responses, 507)
	}
	files := openapi3.NewArraySchema()
	files.Items = schemaRef(contracts.JobV1 + ".fileReference")
	body := openapi3.NewObjectSchema().
		WithPropertyRef("input", schemaRef(input)).
		WithProperty("files", files).
		WithProperty("wait_ms", openapi3.NewIntegerSchema().WithMin(0))
	body.Required = []string{"input"}
	body.AdditionalProperties = openapi3.AdditionalProperties{Has: new(false)}
	content := openapi3.Content{"application/json": openapi3.NewMediaType().WithSchema(body)}
	if len(t.Files) > 0 || t.Execution == contracts.ExecutionJob {
		content["multipart/form-data"] = openapi3.NewMediaType().WithSchema(multipartSchema(t.Files))
	}
	description := t.Summary
	if t.Status == contracts.StatusUnavailable {
		description += " Unavailable on this server: " + t.StatusReason + "."
	}
	p.Set(t.Run.Endpoint, &openapi3.PathItem{Post: &openapi3.Operation{
		OperationID: "run_" + t.ID, Summary: t.Name, Description: description,
		Tags: []string{t.Family}, Security: optionalSecurity(),
		RequestBody: &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).WithContent(content)},
		Responses:   responses,
	}})
	for i, l := range t.Run.Legacy {
		path, params := legacyPath(l.Path)
		item := p.Value(path)
		if item == nil {
			item = &openapi3.PathItem{}
			p.Set(path, item)
		}
		if item.GetOperation(l.Method) != nil {
			continue // a route several tools share: described once
		}
		resp := openapi3.NewResponse().WithDescription("The legacy answer; the route is deprecated.").
			WithContent(openapi3.Content{"application/json": openapi3.NewMediaType().WithSchema(openapi3.NewObjectSchema())})
		resp.Headers = headerRefs("Deprecation", "Sunset", "Link")
		op := &openapi3.Operation{
			OperationID: "legacy_" + t.ID + "_" + strconv.Itoa(i), Tags: []string{"legacy"}, Deprecated: true,
			Summary: "Deprecated: use " + t.Run.Endpoint + ".", Security: optionalSecurity(), Parameters: params,
			Responses: withProblems(answers(200, &openapi3.ResponseRef{Value: resp}), 400, 401, 403, 404, 413, 415, 422, 429, 503),
		}
		if l.Method != http.MethodGet {
			op.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithContent(openapi3.Content{
				"application/json": openapi3.NewMediaType().WithSchema(openapi3.NewObjectSchema())})}
		}
		item.SetOperation(l.Method, op)
	}
}

// legacyPath turns a legacy route's ":name" segments into OpenAPI's
// "{name}" and returns their parameters.
func legacyPath(path string) (string, openapi3.Parameters) {
	segs := strings.Split(path, "/")
	var params openapi3.Parameters
	for i, s := range segs {
		if name, ok := strings.CutPrefix(s, ":"); ok {
			segs[i] = "{" + name + "}"
			if !slices.ContainsFunc(params, func(p *openapi3.ParameterRef) bool { return p.Value.Name == name }) {
				params = append(params, pathParam(name, "A legacy route parameter."))
			}
		}
	}
	return strings.Join(segs, "/"), params
}
