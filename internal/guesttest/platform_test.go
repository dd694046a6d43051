package guesttest

import (
	"reflect"
	"testing"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/tooldef"
)

// The platform block reaches the host as declared: zero fields left out
// take the host's defaults, PageOnly and RequireCaller turn api and
// anonymous off.
func TestDeclarePlatform(t *testing.T) {
	declared := func(p *guest.Platform) tooldef.Platform {
		t.Helper()
		s := testService("ok", ops("run", "render"), noCompute[flatIn, flatOut])
		s.Platform = p
		doc, err := guest.Package{ContractVersion: "1.0.0", ImplementationVersion: "1.0.0", Services: []guest.Declaration{s}}.Declaration()
		if err != nil {
			t.Fatalf("Declaration: %v", err)
		}
		pkg, err := tooldef.Decode(doc, tooldef.Options{})
		if err != nil {
			t.Fatalf("tooldef.Decode: %v", err)
		}
		if r := pkg.Services[0].Refusal; r != nil {
			t.Fatalf("refused: %v", r)
		}
		return pkg.Services[0].Definition.Platform
	}
	if got := declared(nil); !reflect.DeepEqual(got, tooldef.DefaultPlatform()) {
		t.Errorf("nil platform: %+v", got)
	}
	if got := declared(&guest.Platform{}); !reflect.DeepEqual(got, tooldef.DefaultPlatform()) {
		t.Errorf("zero platform: %+v", got)
	}
	got := declared(&guest.Platform{
		Status: "preview", Execution: "job",
		Job:           &guest.Job{Type: "render", Operation: "render", Preset: map[string]any{"dpi": 150}},
		Legacy:        []guest.LegacyRoute{{Method: "POST", Path: "/api/process", Operation: "render", Selector: "render"}},
		Files:         []guest.FileInput{{Name: "file", Types: []string{"application/pdf"}, MaxBytes: 1 << 20}},
		OutputFiles:   true,
		RequireCaller: true,
		QuotaClass:    "tools-render",
		Cost:          3,
	})
	want := tooldef.Platform{
		Status: contracts.StatusPreview, Execution: contracts.ExecutionJob, API: true,
		Job:         &contracts.RunJob{Type: "render", Operation: "render", Preset: got.Job.Preset},
		Legacy:      []contracts.LegacyRoute{{Method: "POST", Path: "/api/process", Operation: "render", Selector: "render"}},
		Files:       []contracts.FileInput{{Name: "file", Types: []string{"application/pdf"}, MaxBytes: 1 << 20}},
		OutputFiles: true, Anonymous: false, QuotaClass: "tools-render", Cost: 3, Hosts: []string{},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("platform %+v\nwant %+v", got, want)
	}
	if page := declared(&guest.Platform{PageOnly: true}); page.API || page.Execution != contracts.ExecutionClient {
		t.Errorf("page-only: %+v", page)
	}
}
