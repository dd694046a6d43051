package server_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit"
)

// The golden HTTP transcripts (testdata/http/*.golden): each case sends
// requests to a real server on loopback and records them with the answers
// (status, the headers that matter, the body), with what varies from run
// to run replaced by placeholders. `go test ./internal/server -run
// Transcript -update` rewrites the files from today's answers; without
// -update the test compares and prints a diff. testdata/http/README.md
// has the format and the placeholders.

// update rewrites the golden transcripts instead of comparing them.
var update = flag.Bool("update", false, "rewrite testdata/http/*.golden from the server's answers")

// goldenDir is where the transcripts live.
var goldenDir = filepath.Join(testkit.Root(), "testdata", "http")

// shownHeaders are the response headers a transcript records, in the
// order it records them; the others (Date, Content-Length) say nothing
// about the API.
var shownHeaders = []string{
	"Content-Type", "Retry-After", "RateLimit-Policy", "RateLimit", "Location", "X-Request-Id",
	"Deprecation", "Sunset", "Link", "WWW-Authenticate", "Allow",
}

// txBoundary is the multipart boundary of every form a transcript sends, so
// that the request it records is the request it sent.
const txBoundary = "transcript-boundary"

// txPart is one part of a multipart request: a field, or a file when
// filename is set. shown, when set, is recorded instead of the content.
type txPart struct {
	name, filename, contentType string
	content                     []byte
	shown                       string
}

// txRequest is one request of a transcript.
type txRequest struct {
	method, path string
	// token is the label of a caller made by transcript.user or .app: its
	// token is sent as a bearer and recorded as "<token:label>".
	token string
	// authorization is an Authorization header sent and recorded as is
	// (a credential that does not resolve), or recorded as
	// authorizationShown when that is set (a real token sent oddly).
	authorization, authorizationShown string
	// header holds further request headers, sent and recorded.
	header [][2]string
	// body is sent as is; shown, when set, is recorded instead (a body
	// too large to read).
	body  []byte
	shown string
	// parts make a multipart/form-data body instead.
	parts []txPart
}

// txAnswer is a response, its body read.
type txAnswer struct {
	status int
	header http.Header
	body   []byte
}

// field decodes the JSON body and returns the string at the member path
// (objects only), or "" when there is none.
func (a txAnswer) field(path ...string) string {
	var v any
	if json.Unmarshal(a.body, &v) != nil {
		return ""
	}
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

// transcript is one case: the server, the callers the case made, and the
// exchanges recorded so far.
type transcript struct {
	t *testing.T
	r *rig
	// index is the case's place in transcriptCases.
	index  int
	tokens map[string]string
	// jobs numbers the job ids the case's transcript shows, in order.
	jobs map[string]int
	text strings.Builder
}

// send sends req and returns the answer, without recording it (a step
// that sets a case up).
func (tr *transcript) send(req txRequest) txAnswer {
	tr.t.Helper()
	var body io.Reader = bytes.NewReader(req.body)
	contentType := ""
	if req.parts != nil {
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		if err := w.SetBoundary(txBoundary); err != nil {
			tr.t.Fatal(err)
		}
		for _, p := range req.parts {
			h := textproto.MIMEHeader{}
			disposition := fmt.Sprintf(`form-data; name=%q`, p.name)
			if p.filename != "" {
				disposition += fmt.Sprintf(`; filename=%q`, p.filename)
			}
			h.Set("Content-Disposition", disposition)
			if p.contentType != "" {
				h.Set("Content-Type", p.contentType)
			}
			pw, err := w.CreatePart(h)
			if err != nil {
				tr.t.Fatal(err)
			}
			if _, err := pw.Write(p.content); err != nil {
				tr.t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			tr.t.Fatal(err)
		}
		body, contentType = &buf, w.FormDataContentType()
	}
	hr, err := http.NewRequest(req.method, tr.r.url+req.path, body)
	if err != nil {
		tr.t.Fatal(err)
	}
	if contentType != "" {
		hr.Header.Set("Content-Type", contentType)
	}
	if req.token != "" {
		token, ok := tr.tokens[req.token]
		if !ok {
			tr.t.Fatalf("no caller %q in this case", req.token)
		}
		hr.Header.Set("Authorization", "Bearer "+token)
	}
	if req.authorization != "" {
		hr.Header.Set("Authorization", req.authorization)
	}
	for _, h := range req.header {
		hr.Header.Set(h[0], h[1])
	}
	resp, err := tr.r.client.Do(hr)
	if err != nil {
		tr.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tr.t.Fatal(err)
	}
	return txAnswer{status: resp.StatusCode, header: resp.Header, body: b}
}

// do sends req, records the exchange and returns the answer.
func (tr *transcript) do(req txRequest) txAnswer {
	tr.t.Helper()
	a := tr.send(req)
	if tr.text.Len() > 0 {
		tr.text.WriteString("\n")
	}
	tr.text.WriteString("### request\n")
	tr.text.WriteString(tr.renderRequest(req))
	tr.text.WriteString("\n### response\n")
	tr.text.WriteString(tr.renderAnswer(a))
	return a
}

// note adds a comment line to the transcript, before the next exchange.
func (tr *transcript) note(format string, args ...any) {
	if tr.text.Len() > 0 {
		tr.text.WriteString("\n")
	}
	for line := range strings.SplitSeq(fmt.Sprintf(format, args...), "\n") {
		tr.text.WriteString(strings.TrimRight("# "+line, " ") + "\n")
	}
}

func (tr *transcript) renderRequest(req txRequest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", req.method, tr.normalisers("").text(req.path))
	if req.token != "" {
		fmt.Fprintf(&b, "Authorization: Bearer <token:%s>\n", req.token)
	}
	switch {
	case req.authorizationShown != "":
		fmt.Fprintf(&b, "Authorization: %s\n", req.authorizationShown)
	case req.authorization != "":
		fmt.Fprintf(&b, "Authorization: %s\n", req.authorization)
	}
	for _, h := range req.header {
		fmt.Fprintf(&b, "%s: %s\n", h[0], h[1])
	}
	switch {
	case req.parts != nil:
		fmt.Fprintf(&b, "Content-Type: multipart/form-data; boundary=%s\n\n", txBoundary)
		for _, p := range req.parts {
			fmt.Fprintf(&b, "--%s\n", txBoundary)
			fmt.Fprintf(&b, "Content-Disposition: form-data; name=%q", p.name)
			if p.filename != "" {
				fmt.Fprintf(&b, "; filename=%q", p.filename)
			}
			b.WriteString("\n")
			if p.contentType != "" {
				fmt.Fprintf(&b, "Content-Type: %s\n", p.contentType)
			}
			content := string(p.content)
			if p.shown != "" {
				content = p.shown
			}
			fmt.Fprintf(&b, "\n%s\n", content)
		}
		fmt.Fprintf(&b, "--%s--\n", txBoundary)
	case req.shown != "":
		fmt.Fprintf(&b, "\n%s\n", req.shown)
	case len(req.body) > 0:
		fmt.Fprintf(&b, "\n%s\n", req.body)
	}
	return b.String()
}

// renderAnswer records a response: the status line, the shown headers and
// the body, normalised (README.md in testdata/http).
func (tr *transcript) renderAnswer(a txAnswer) string {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\n", a.status, http.StatusText(a.status))
	n := tr.normalisers(a.header.Get("X-Request-Id"))
	for _, name := range shownHeaders {
		for _, v := range a.header.Values(name) {
			switch name {
			case "X-Request-Id":
				v = "<request_id>"
			default:
				v = n.text(v)
			}
			fmt.Fprintf(&b, "%s: %s\n", name, v)
		}
	}
	if len(a.body) == 0 {
		return b.String()
	}
	b.WriteString("\n")
	mediaType, _, _ := strings.Cut(a.header.Get("Content-Type"), ";")
	mediaType = strings.TrimSpace(mediaType)
	switch {
	case mediaType == "application/json" || strings.HasSuffix(mediaType, "+json"):
		v, err := decodeOrdered(a.body)
		if err != nil {
			fmt.Fprintf(&b, "<not JSON (%v)>\n%s\n", err, n.text(string(a.body)))
			break
		}
		writePretty(&b, n.json(v, ""), 0)
		b.WriteString("\n")
	case mediaType == "text/event-stream":
		for line := range strings.SplitSeq(strings.TrimRight(string(a.body), "\n"), "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				if v, err := decodeOrdered([]byte(data)); err == nil {
					var d strings.Builder
					writeCompact(&d, n.json(v, ""))
					line = "data: " + d.String()
				}
			}
			b.WriteString(line + "\n")
		}
	case strings.HasPrefix(mediaType, "text/"):
		b.WriteString(n.text(string(a.body)))
		if !strings.HasSuffix(string(a.body), "\n") {
			b.WriteString("\n")
		}
	default:
		fmt.Fprintf(&b, "<%s body>\n", mediaType)
	}
	return b.String()
}

// jsonObject is a JSON object with its members in the order they came.
type jsonObject []jsonMember

type jsonMember struct {
	key   string
	value any
}

// decodeOrdered decodes one JSON document, keeping object members in
// order: values are nil, bool, json.Number, string, []any and jsonObject.
func decodeOrdered(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := decodeValue(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("data after the document")
	}
	return v, nil
}

func decodeValue(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := jsonObject{}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(d)
			if err != nil {
				return nil, err
			}
			o = append(o, jsonMember{k.(string), v})
		}
		_, err := d.Token()
		return o, err
	case json.Delim('['):
		a := []any{}
		for d.More() {
			v, err := decodeValue(d)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := d.Token()
		return a, err
	}
	return tok, nil
}

// Placeholders of what varies from run to run.
var (
	jobID       = regexp.MustCompile(`job_[a-z2-7]{26}`)
	expiresArg  = regexp.MustCompile(`expires=[0-9]+`)
	sigArg      = regexp.MustCompile(`sig=[A-Za-z0-9_%=-]+`)
	timestamp   = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$`)
	principal   = regexp.MustCompile(`\b(user|app|session):[0-9]+\b`)
	executionID = regexp.MustCompile(`^[0-9a-f]{32}$`)
)

// nativeMemoryModes are the memory enforcement modes of native jobs,
// which depend on the host (docs/supervisor.md).
var nativeMemoryModes = map[string]bool{
	"cgroup_v2_hard": true, "cgroup_v1_hard": true, "process_tree_observed": true, "unavailable": true,
}

// durationKeys are members holding a measured duration, in milliseconds,
// wherever they are.
var durationKeys = map[string]bool{
	"server_processing_ms": true, "elapsed_ms": true, "phase_elapsed_ms": true, "time_ms": true,
	"duration_ms": true,
}

// normaliser replaces what varies in one answer (or request).
type normaliser struct {
	// requestID is the answer's X-Request-Id, or "".
	requestID string
	// jobs numbers job ids across the case.
	jobs map[string]int
}

func (tr *transcript) normalisers(requestID string) normaliser {
	if tr.jobs == nil {
		tr.jobs = map[string]int{}
	}
	return normaliser{requestID: requestID, jobs: tr.jobs}
}

// text replaces the request id, job ids (numbered in the order the case
// shows them: <job_id:1>, <job_id:2>), account numbers and signed URLs'
// expiry and signature in s.
func (n normaliser) text(s string) string {
	if n.requestID != "" {
		s = strings.ReplaceAll(s, n.requestID, "<request_id>")
	}
	s = jobID.ReplaceAllStringFunc(s, func(id string) string {
		if _, ok := n.jobs[id]; !ok {
			n.jobs[id] = len(n.jobs) + 1
		}
		return fmt.Sprintf("<job_id:%d>", n.jobs[id])
	})
	s = principal.ReplaceAllString(s, "$1:<n>")
	s = expiresArg.ReplaceAllString(s, "expires=<expires>")
	return sigArg.ReplaceAllString(s, "sig=<sig>")
}

// json replaces what varies in v, the value of member key.
func (n normaliser) json(v any, key string) any {
	switch v := v.(type) {
	case jsonObject:
		out := make(jsonObject, len(v))
		for i, m := range v {
			switch {
			case key == "metrics" && m.value != nil:
				// Every measured phase: a number, never null (null says the
				// phase was not observed, which is part of the answer).
				out[i] = jsonMember{m.key, "<ms>"}
			case key == "capabilities" && m.key == "memory" || m.key == "mode" && nativeMemoryModes[fmt.Sprint(m.value)]:
				// How this host enforces native memory (cgroup v1 or v2, or
				// neither): the machine's, not the API's.
				out[i] = jsonMember{m.key, "<memory_mode>"}
			case key == "pool" && (m.key == "completed" || m.key == "failed"):
				// How many items the process ran before this case.
				out[i] = jsonMember{m.key, "<count>"}
			default:
				out[i] = jsonMember{m.key, n.json(m.value, m.key)}
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = n.json(e, key)
		}
		return out
	case json.Number:
		switch {
		case key == "generation":
			return "<generation>"
		case key == "peak_bytes":
			return "<bytes>"
		case durationKeys[key]:
			return "<ms>"
		}
		return v
	case string:
		switch {
		case n.requestID != "" && v == n.requestID, key == "instance":
			return "<request_id>"
		case key == "runtime_id":
			return "<runtime_id>"
		case key == "tier":
			// Which tier serves a module (interpreter, then compiled):
			// how far its compile in the background has got.
			return "<tier>"
		case (key == "execution_id" || key == "id") && executionID.MatchString(v):
			return "<execution_id>"
		case timestamp.MatchString(v):
			return "<time>"
		}
		return n.text(v)
	}
	return v
}

// writePretty pretty-prints v with two-space indents; an array of scalars
// that fits on a line stays on one.
func writePretty(b *strings.Builder, v any, depth int) {
	indent := strings.Repeat("  ", depth)
	switch v := v.(type) {
	case jsonObject:
		if len(v) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, m := range v {
			b.WriteString(indent + "  ")
			writeScalar(b, m.key)
			b.WriteString(": ")
			writePretty(b, m.value, depth+1)
			if i < len(v)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(indent + "}")
	case []any:
		if len(v) == 0 {
			b.WriteString("[]")
			return
		}
		if !slices.ContainsFunc(v, isComposite) {
			var line strings.Builder
			writeCompact(&line, v)
			if len(indent)+line.Len() <= 100 {
				b.WriteString(line.String())
				return
			}
		}
		b.WriteString("[\n")
		for i, e := range v {
			b.WriteString(indent + "  ")
			writePretty(b, e, depth+1)
			if i < len(v)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(indent + "]")
	default:
		writeScalar(b, v)
	}
}

func isComposite(v any) bool {
	switch v.(type) {
	case jsonObject, []any:
		return true
	}
	return false
}

// writeCompact writes v on one line.
func writeCompact(b *strings.Builder, v any) {
	switch v := v.(type) {
	case jsonObject:
		b.WriteString("{")
		for i, m := range v {
			if i > 0 {
				b.WriteString(",")
			}
			writeScalar(b, m.key)
			b.WriteString(":")
			writeCompact(b, m.value)
		}
		b.WriteString("}")
	case []any:
		b.WriteString("[")
		for i, e := range v {
			if i > 0 {
				b.WriteString(",")
			}
			writeCompact(b, e)
		}
		b.WriteString("]")
	default:
		writeScalar(b, v)
	}
}

func writeScalar(b *strings.Builder, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	b.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// checkGolden compares got with testdata/http/NAME.golden, or writes it
// there under -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(goldenDir, name+".golden")
	if *update {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s is missing: run go test ./internal/server -run Transcript -update", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Errorf("the answers differ from %s (- golden, + now; -update rewrites it):\n%s",
			filepath.Join("testdata", "http", name+".golden"), lineDiff(string(want), got))
	}
}

// lineDiff is a readable line diff of a and b: the common prefix and
// suffix trimmed to three lines of context, the middle diffed by longest
// common subsequence when small enough, else shown whole.
func lineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	var out strings.Builder
	ctx := max(0, pre-3)
	fmt.Fprintf(&out, "@@ line %d @@\n", ctx+1)
	for _, l := range x[ctx:pre] {
		out.WriteString("  " + l + "\n")
	}
	mx, my := x[pre:len(x)-suf], y[pre:len(y)-suf]
	if len(mx)*len(my) > 4_000_000 {
		for _, l := range mx {
			out.WriteString("- " + l + "\n")
		}
		for _, l := range my {
			out.WriteString("+ " + l + "\n")
		}
	} else {
		// lcs[i][j] is the longest common subsequence of mx[i:] and my[j:].
		lcs := make([][]int32, len(mx)+1)
		for i := range lcs {
			lcs[i] = make([]int32, len(my)+1)
		}
		for i := len(mx) - 1; i >= 0; i-- {
			for j := len(my) - 1; j >= 0; j-- {
				if mx[i] == my[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(mx) || j < len(my) {
			switch {
			case i < len(mx) && j < len(my) && mx[i] == my[j]:
				out.WriteString("  " + mx[i] + "\n")
				i, j = i+1, j+1
			case i < len(mx) && (j == len(my) || lcs[i+1][j] >= lcs[i][j+1]):
				out.WriteString("- " + mx[i] + "\n")
				i++
			default:
				out.WriteString("+ " + my[j] + "\n")
				j++
			}
		}
	}
	for _, l := range x[len(x)-suf : min(len(x), len(x)-suf+3)] {
		out.WriteString("  " + l + "\n")
	}
	return out.String()
}
