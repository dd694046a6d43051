package guesttest

import (
	"os"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// The types of guest/compute_test.go's tool, with the operations whose
// results are checked against the output schema here.

type toolItem struct {
	Name string   `json:"name"`
	Tags []string `json:"tags,omitempty"`
}

type toolIn struct {
	Operation string    `json:"operation"`
	Text      string    `json:"text"`
	Times     *int      `json:"times,omitempty" ops:"repeat" minimum:"1" maximum:"10" default:"1"`
	Mode      string    `json:"mode,omitempty" ops:"behave"`
	Item      *toolItem `json:"item,omitempty" ops:"echo"`
	Data      []byte    `json:"data,omitempty" ops:"echo"`
	Count     int8      `json:"count,omitempty" ops:"echo"`
	Ratio     float64   `json:"ratio,omitempty" ops:"echo"`
}

type toolOut struct {
	Text   string   `json:"text"`
	Name   *string  `json:"name,omitempty" ops:"echo"`
	Tags   []string `json:"tags" ops:"echo"`
	Data   []byte   `json:"data,omitempty" ops:"echo"`
	Count  int8     `json:"count" ops:"echo"`
	Ratio  float64  `json:"ratio" ops:"echo"`
	Window int64    `json:"window_ms,omitempty" ops:"behave"`
}

func toolCompute(ctx *guest.Context, in toolIn) (toolOut, error) {
	switch in.Operation {
	case "echo":
		out := toolOut{Text: in.Text, Data: in.Data, Count: in.Count, Ratio: in.Ratio}
		if in.Item != nil {
			out.Name, out.Tags = &in.Item.Name, in.Item.Tags
		}
		return out, nil
	case "repeat":
		n := 1
		if in.Times != nil {
			n = *in.Times
		}
		return toolOut{Text: strings.Repeat(in.Text, n)}, nil
	}
	if in.Mode == "claim" {
		w, err := ctx.ClaimEngineWindow(500)
		if err != nil {
			return toolOut{}, err
		}
		return toolOut{Text: "claimed", Window: w.TimeoutMS}, nil
	}
	return toolOut{Text: "ok"}, nil
}

// TestMain registers the tool package, once for the process, as a tool's
// init function would.
func TestMain(m *testing.M) {
	guest.Register(guest.Package{ContractVersion: "1.0.0", ImplementationVersion: "1.0.0", Services: []guest.Declaration{
		testService("other", ops("run"), noCompute[flatIn, flatOut]),
		testService("tool", ops("echo", "repeat", "behave"), toolCompute),
	}})
	os.Exit(m.Run())
}

func behave(mode string) string {
	return `{"tool_code":"tool","operation":"behave","parameters":{"operation":"behave","text":"","mode":"` + mode + `"}}`
}

func TestComputeResultsPassOutputSchema(t *testing.T) {
	decl, err := guest.Describe()
	if err != nil {
		t.Fatal(err)
	}
	v := validator(t, get(t, doc(t, string(decl)), "services", 1, "output_schema"))
	for _, input := range []string{
		`{"tool_code":"tool","operation":"echo","parameters":{"operation":"echo","text":"x","item":{"name":"n"},"data":"AA=="}}`,
		`{"tool_code":"tool","operation":"echo","parameters":{"operation":"echo","text":""}}`,
		`{"tool_code":"tool","operation":"repeat","parameters":{"operation":"repeat","text":"x","times":2}}`,
		behave("claim"),
		behave("ok"),
	} {
		res, err := guest.Invoke([]byte(input))
		if err != nil {
			t.Fatalf("Invoke(%s): %v", input, err)
		}
		if err := v.Validate(doc(t, string(res)), toolerr.InvalidOutput); err != nil {
			t.Errorf("result %s fails the output schema: %v", res, err)
		}
	}
}

// TestDescribeGoldenPassesProfile decodes guest's describe golden file as
// the host does and checks each service's schemas.
func TestDescribeGoldenPassesProfile(t *testing.T) {
	b, err := os.ReadFile("../../guest/testdata/describe.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	v := doc(t, string(b))
	for i, s := range get(t, v, "services").([]any) {
		var names []string
		for _, op := range get(t, s, "operations").([]any) {
			names = append(names, get(t, op, "operation").(string))
		}
		if err := schema.Check(get(t, s, "input_schema"), get(t, s, "output_schema"), names); err != nil {
			t.Errorf("service %d: schema.Check: %v", i, err)
		}
	}
}
