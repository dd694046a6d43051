package contracts_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/wire"
)

func TestNamesAndRaw(t *testing.T) {
	want := []string{contracts.JobV1, contracts.RunRequestV1, contracts.RunV1, contracts.ToolListV1, contracts.ToolV1}
	if got := contracts.Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for _, name := range want {
		raw, ok := contracts.Raw(name)
		if !ok {
			t.Fatalf("Raw(%q): none", name)
		}
		v, err := wire.Decode(raw, wire.Limits{MaxDepth: 64})
		if err != nil {
			t.Fatalf("%s is not strict JSON: %v", name, err)
		}
		m := v.(map[string]any)
		if m["$id"] != contracts.Route+name+".json" || m["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: $id %v, $schema %v", name, m["$id"], m["$schema"])
		}
		if title, _ := m["title"].(string); title != strings.Replace(strings.TrimSuffix(name, ".v1"), ".v1", "", 1)+"@1" {
			t.Errorf("%s: title %q", name, title)
		}
	}
	if _, ok := contracts.Raw("tools.tool.v2"); ok {
		t.Error("Raw of an unknown contract")
	}
}

func TestValidateUnknown(t *testing.T) {
	if err := contracts.Validate("tools.tool.v2", map[string]any{}); !errors.Is(err, contracts.ErrUnknownContract) {
		t.Errorf("Validate = %v, want ErrUnknownContract", err)
	}
}

// Documents of each contract, good and bad, decoded from JSON text.
func TestDocuments(t *testing.T) {
	tests := []struct {
		name, contract, doc string
		ok                  bool
	}{
		{"run request", contracts.RunRequestV1, `{"input":{"operation":"protect","user_password":"x"},"wait_ms":2000,
			"files":[{"name":"file","job":"j1","file":"out.pdf"},{"name":"logo","media":"m9"}]}`, true},
		{"run request without input", contracts.RunRequestV1, `{"wait_ms":2000}`, false},
		{"run request waiting too long", contracts.RunRequestV1, `{"input":{},"wait_ms":600000}`, false},
		{"run request with a half reference", contracts.RunRequestV1, `{"input":{},"files":[{"name":"file","job":"j1"}]}`, false},
		{"run request with both references", contracts.RunRequestV1, `{"input":{},"files":[{"name":"file","media":"m","job":"j1","file":"a"}]}`, false},
		{"run request unknown field", contracts.RunRequestV1, `{"input":{},"priority":1}`, false},

		{"succeeded run", contracts.RunV1, `{"id":"x1","tool":"slug","status":"succeeded","result":{"text":"a-b"}}`, true},
		{"succeeded run without result", contracts.RunV1, `{"id":"x1","tool":"slug","status":"succeeded"}`, false},
		{"failed run", contracts.RunV1, `{"id":"x1","tool":"json","status":"failed",
			"error":{"code":"invalid_parameters","retryable":false,"message":"text is not JSON","issues":[],"issue_count":0}}`, true},
		{"failed run with a result", contracts.RunV1, `{"id":"x1","tool":"json","status":"failed","result":{},
			"error":{"code":"execution_failed","retryable":false}}`, false},
		{"cancelled run", contracts.RunV1, `{"id":"j1","tool":"pdf_protect","status":"cancelled","job":{"id":"j1","location":"/api/v1/jobs/j1"},
			"error":{"code":"cancelled","retryable":false}}`, true},
		{"queued run", contracts.RunV1, `{"id":"j1","tool":"pdf_protect","status":"queued","job":{"id":"j1","location":"/api/v1/jobs/j1"}}`, true},
		{"running run without job", contracts.RunV1, `{"id":"j1","tool":"pdf_protect","status":"running"}`, false},
		{"running run with files", contracts.RunV1, `{"id":"j1","tool":"pdf_protect","status":"running","job":{"id":"j1","location":"/api/v1/jobs/j1"},
			"files":[{"name":"a.pdf","url":"/u","expires":"2026-12-01T00:00:00Z"}]}`, false},
		{"job run with files", contracts.RunV1, `{"id":"j1","tool":"pdf_protect","status":"succeeded","result":{"pages":1},
			"job":{"id":"j1","location":"/api/v1/jobs/j1"},
			"files":[{"name":"protected.pdf","url":"/api/v1/jobs/j1/files/protected.pdf","owner":"p:user:1","expires":"2026-12-01T00:00:00Z","type":"application/pdf","bytes":1234}]}`, true},
		{"job run with a file without its owner", contracts.RunV1, `{"id":"j1","tool":"pdf_protect","status":"succeeded","result":{"pages":1},
			"job":{"id":"j1","location":"/api/v1/jobs/j1"},
			"files":[{"name":"protected.pdf","url":"/api/v1/jobs/j1/files/protected.pdf","expires":"2026-12-01T00:00:00Z"}]}`, false},
		{"run status unknown", contracts.RunV1, `{"id":"x1","tool":"slug","status":"done","result":{}}`, false},

		{"queued job", contracts.JobV1, `{"id":"j1","type":"pdf","tool":"pdf_protect","state":"queued","progress":0,
			"input":{"operation":"protect","tool":"protect"},"result":null,"error":null,"files":[],
			"created":"2026-11-30T10:00:00Z","started":null,"finished":null,"attempts":0,"references":[]}`, true},
		{"succeeded job", contracts.JobV1, `{"id":"j2","type":"pdf","state":"succeeded","progress":100,
			"input":{"tool":"render"},"result":{"pages":2},"error":null,
			"files":[{"name":"page-1.png","type":"image/png","bytes":2048,"owner":"user:42","expires":"2026-12-01T10:00:00Z","url":"/api/v1/jobs/j2/files/page-1.png"}],
			"created":"2026-11-30T10:00:00Z","started":"2026-11-30T10:00:01.5Z","finished":"2026-11-30T10:00:03+01:00","attempts":1,
			"retryOf":"j1","references":[{"name":"file","job":"j0","file":"protected.pdf"}]}`, true},
		{"job file without owner", contracts.JobV1, `{"id":"j2","type":"pdf","state":"succeeded","progress":100,
			"input":{},"result":{},"error":null,
			"files":[{"name":"a.png","type":"image/png","bytes":1,"expires":"2026-12-01T10:00:00Z","url":"/u"}],
			"created":"2026-11-30T10:00:00Z","started":null,"finished":null,"attempts":1,"references":[]}`, false},
		{"job progress over 100", contracts.JobV1, `{"id":"j2","type":"pdf","state":"running","progress":101,
			"input":{},"result":null,"error":null,"files":[],
			"created":"2026-11-30T10:00:00Z","started":null,"finished":null,"attempts":1,"references":[]}`, false},
		{"job time not RFC 3339", contracts.JobV1, `{"id":"j2","type":"pdf","state":"queued","progress":0,
			"input":{},"result":null,"error":null,"files":[],
			"created":"30/11/2026","started":null,"finished":null,"attempts":0,"references":[]}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := wire.Decode([]byte(tt.doc), wire.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			err = contracts.Validate(tt.contract, doc)
			if (err == nil) != tt.ok {
				t.Fatalf("Validate = %v, want ok %v", err, tt.ok)
			}
			if err != nil {
				var ce *contracts.Error
				if !errors.As(err, &ce) || !errors.Is(err, contracts.ErrInvalid) || ce.Contract != tt.contract || len(ce.Issues) == 0 {
					t.Errorf("error %#v", err)
				}
			}
		})
	}
}
