//go:build !wasip1 && !guestgen

package guest

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

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

func toolCompute(ctx *Context, in toolIn) (toolOut, error) {
	if ctx.Operation() != in.Operation || ctx.ToolCode() != "tool" {
		return toolOut{}, Failed("context mismatch")
	}
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
	switch in.Mode {
	case "invalid":
		return toolOut{}, InvalidInput("text is not valid JSON at byte %d", 7)
	case "failed":
		return toolOut{}, Failed("solver gave up")
	case "plain":
		return toolOut{}, errors.New("plain failure")
	case "wrapped":
		return toolOut{}, fmt.Errorf("solving: %w", &Error{Code: CodeExecutionFailed, Message: "inner", Retryable: true})
	case "nil_error":
		var e *Error
		return toolOut{}, e
	case "badcode":
		return toolOut{}, &Error{Code: "nope", Message: "odd", Retryable: true}
	case "long":
		return toolOut{}, errors.New(strings.Repeat("é", 300) + "\xff")
	case "panic":
		var s []int
		_ = s[3]
	case "stop":
		if err := ctx.Checkpoint(); err != nil {
			return toolOut{}, fmt.Errorf("loop: %w", err)
		}
	case "ignore_stop":
		_ = ctx.Checkpoint()
	case "claim":
		w, err := ctx.ClaimEngineWindow(500)
		if err != nil {
			return toolOut{}, err
		}
		return toolOut{Text: "claimed", Window: w.TimeoutMS}, nil
	case "claim_twice":
		if _, err := ctx.ClaimEngineWindow(0); err != nil {
			return toolOut{}, err
		}
		_, err := ctx.ClaimEngineWindow(0)
		return toolOut{}, err
	case "log":
		ctx.Logf("hello %d", 42)
	case "wrong_field":
		return toolOut{Text: "x", Count: 1}, nil
	}
	return toolOut{Text: "ok"}, nil
}

func toolPackage() Package {
	return Package{ContractVersion: "1.0.0", ImplementationVersion: "1.0.0", Services: []Declaration{
		testService("other", ops("run"), noCompute[flatIn, flatOut]),
		testService("tool", ops("echo", "repeat", "behave"), toolCompute),
	}}
}

func TestCompute(t *testing.T) {
	for _, tc := range []struct {
		name   string
		input  string
		stop   uint32 // what checkpoint returns
		window int64
		out    string // the result, or
		err    string // the error document
	}{
		{
			name:  "echo",
			input: `{"tool_code":"tool","operation":"echo","parameters":{"operation":"echo","text":"a\"b\u00e9\n<>","item":{"name":"n","tags":["x","y"]},"data":"AAEC","count":-7,"ratio":0.5}}`,
			out:   `{"text":"a\"bé\n<>","name":"n","tags":["x","y"],"data":"AAEC","count":-7,"ratio":0.5}`,
		},
		{
			name:  "nil slice is an empty array, nil pointer omitted",
			input: `{"tool_code":"tool","operation":"echo","parameters":{"operation":"echo","text":""}}`,
			out:   `{"text":"","tags":[],"count":0,"ratio":0}`,
		},
		{
			name:  "integral number into an integer",
			input: `{"tool_code":"tool","operation":"echo","parameters":{"operation":"echo","text":"","count":-1.0e1}}`,
			out:   `{"text":"","tags":[],"count":-10,"ratio":0}`,
		},
		{
			name:  "omitted optional field: the tool's own default",
			input: `{"tool_code":"tool","operation":"repeat","parameters":{"operation":"repeat","text":"ab"}}`,
			out:   `{"text":"ab"}`,
		},
		{
			name:  "repeat",
			input: `{"parameters":{"times":3,"text":"ab","operation":"repeat"},"operation":"repeat","tool_code":"tool"}`,
			out:   `{"text":"ababab"}`,
		},
		{
			name:  "unknown field",
			input: `{"tool_code":"tool","operation":"repeat","parameters":{"operation":"repeat","text":"ab","colour":1}}`,
			err:   `{"code":"invalid_parameters","message":"parameters: unknown field \"colour\"","retryable":false}`,
		},
		{
			name:  "unknown field with an unsafe name is not echoed",
			input: `{"tool_code":"tool","operation":"repeat","parameters":{"operation":"repeat","text":"ab","my secret":1}}`,
			err:   `{"code":"invalid_parameters","message":"parameters: unknown field","retryable":false}`,
		},
		{
			name:  "unknown nested field",
			input: `{"tool_code":"tool","operation":"echo","parameters":{"operation":"echo","text":"","item":{"name":"n","extra":true}}}`,
			err:   `{"code":"invalid_parameters","message":"parameters/item: unknown field \"extra\"","retryable":false}`,
		},
		{
			name:  "operation mismatch",
			input: `{"tool_code":"tool","operation":"repeat","parameters":{"operation":"echo","text":"ab"}}`,
			err:   `{"code":"invalid_parameters","message":"parameters/operation: does not match the requested operation","retryable":false}`,
		},
		{
			name:  "field not accepted by the operation",
			input: `{"tool_code":"tool","operation":"repeat","parameters":{"operation":"repeat","text":"ab","data":"AA=="}}`,
			err:   `{"code":"invalid_parameters","message":"parameters: field \"data\" is not accepted by operation \"repeat\"","retryable":false}`,
		},
		{
			name:  "missing required field",
			input: `{"tool_code":"tool","operation":"repeat","parameters":{"operation":"repeat"}}`,
			err:   `{"code":"invalid_parameters","message":"parameters: missing required field \"text\"","retryable":false}`,
		},
		{
			name:  "null",
			input: `{"tool_code":"tool","operation":"repeat","parameters":{"operation":"repeat","text":"a","times":null}}`,
			err:   `{"code":"invalid_parameters","message":"parameters/times: null is not allowed","retryable":false}`,
		},
		{
			name:  "wrong type in an array",
			input: `{"tool_code":"tool","operation":"echo","parameters":{"operation":"echo","text":"","item":{"name":"n","tags":["x",2]}}}`,
			err:   `{"code":"invalid_parameters","message":"parameters/item/tags/1: expected a string","retryable":false}`,
		},
		{
			name:  "fraction into an integer",
			input: `{"tool_code":"tool","operation":"echo","parameters":{"operation":"echo","text":"","count":1.5}}`,
			err:   `{"code":"invalid_parameters","message":"parameters/count: expected an integer","retryable":false}`,
		},
		{
			name:  "integer out of range",
			input: `{"tool_code":"tool","operation":"echo","parameters":{"operation":"echo","text":"","count":128}}`,
			err:   `{"code":"invalid_parameters","message":"parameters/count: integer out of range","retryable":false}`,
		},
		{
			name:  "bad base64",
			input: `{"tool_code":"tool","operation":"echo","parameters":{"operation":"echo","text":"","data":"AAE"}}`,
			err:   `{"code":"invalid_parameters","message":"parameters/data: not valid base64","retryable":false}`,
		},
		{
			name:  "duplicate name in parameters",
			input: `{"tool_code":"tool","operation":"repeat","parameters":{"operation":"repeat","text":"a","te\u0078t":"b"}}`,
			err:   `{"code":"invalid_parameters","message":"parameters: an object has a duplicate member name","retryable":false}`,
		},
		{
			name:  "parameters not an object",
			input: `{"tool_code":"tool","operation":"repeat","parameters":[1]}`,
			err:   `{"code":"invalid_parameters","message":"parameters: expected an object","retryable":false}`,
		},
		{
			name:  "unknown tool",
			input: `{"tool_code":"nope","operation":"repeat","parameters":{}}`,
			err:   `{"code":"execution_failed","message":"guest: this module has no service \"nope\"","retryable":false}`,
		},
		{
			name:  "unknown operation",
			input: `{"tool_code":"tool","operation":"fly","parameters":{"operation":"fly"}}`,
			err:   `{"code":"execution_failed","message":"guest: service \"tool\" has no operation \"fly\"","retryable":false}`,
		},
		{
			name:  "malformed envelope",
			input: `{"tool_code":"tool","operation":"repeat"}`,
			err:   `{"code":"execution_failed","message":"guest: compute input: missing parameters","retryable":false}`,
		},
		{
			name:  "envelope with an unknown member",
			input: `{"tool_code":"tool","operation":"repeat","parameters":{},"x":1}`,
			err:   `{"code":"execution_failed","message":"guest: compute input: unknown member","retryable":false}`,
		},
		{
			name:  "envelope with trailing data",
			input: `{"tool_code":"tool","operation":"repeat","parameters":{}} {}`,
			err:   `{"code":"execution_failed","message":"guest: compute input: data after the JSON value","retryable":false}`,
		},
		{
			name:  "InvalidInput",
			input: behave("invalid"),
			err:   `{"code":"invalid_parameters","message":"text is not valid JSON at byte 7","retryable":false}`,
		},
		{
			name:  "Failed",
			input: behave("failed"),
			err:   `{"code":"execution_failed","message":"solver gave up","retryable":false}`,
		},
		{
			name:  "plain error",
			input: behave("plain"),
			err:   `{"code":"execution_failed","message":"plain failure","retryable":false}`,
		},
		{
			name:  "wrapped *Error keeps its code, flag and message",
			input: behave("wrapped"),
			err:   `{"code":"execution_failed","message":"inner","retryable":true}`,
		},
		{
			name:  "unknown code becomes execution_failed",
			input: behave("badcode"),
			err:   `{"code":"execution_failed","message":"odd","retryable":false}`,
		},
		{
			name:  "typed nil *Error",
			input: behave("nil_error"),
			err:   `{"code":"execution_failed","message":"Compute returned a nil *guest.Error as its error","retryable":false}`,
		},
		{
			name:  "panic recovered",
			input: behave("panic"),
			err:   `{"code":"execution_failed","message":"panic: runtime error: index out of range [3] with length 0","retryable":false}`,
		},
		{
			name:  "checkpoint goes on",
			input: behave("stop"),
			out:   `{"text":"ok"}`,
		},
		{
			name:  "checkpoint says stop",
			input: behave("stop"),
			stop:  1,
			err:   `{"code":"execution_limit","message":"stopped: the soft deadline has passed or the item was cancelled","retryable":true}`,
		},
		{
			name:  "a stop the tool ignores still fails the item",
			input: behave("ignore_stop"),
			stop:  1,
			err:   `{"code":"execution_limit","message":"stopped: the soft deadline has passed or the item was cancelled","retryable":true}`,
		},
		{
			name:   "engine window granted",
			input:  behave("claim"),
			window: 2500,
			out:    `{"text":"claimed","window_ms":2500}`,
		},
		{
			name:   "engine window refused",
			input:  behave("claim"),
			window: -1,
			err:    `{"code":"execution_limit","message":"no engine window: the remaining soft window cannot hold the engine budget plus the reserve","retryable":true}`,
		},
		{
			name:   "second claim",
			input:  behave("claim_twice"),
			window: 100,
			err:    `{"code":"execution_failed","message":"guest: ClaimEngineWindow: the engine window was already claimed for this item","retryable":false}`,
		},
		{
			name:  "result field the operation does not have",
			input: behave("wrong_field"),
			err:   `{"code":"execution_failed","message":"guest: result: field \"count\" is set but operation \"behave\" does not have it","retryable":false}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			usePackage(t, toolPackage())
			f := useFake(t)
			f.input, f.stop = []byte(tc.input), tc.stop
			if tc.window != 0 {
				f.window = tc.window
			}
			rc := runCompute()
			if tc.err == "" {
				if rc != 0 {
					t.Fatalf("rc = %d, error %s", rc, f.errDoc)
				}
				if string(f.output) != tc.out {
					t.Errorf("output = %s\nwant     %s", f.output, tc.out)
				}
				return
			}
			if rc != 1 || f.output != nil {
				t.Fatalf("rc = %d, output %s", rc, f.output)
			}
			if string(f.errDoc) != tc.err {
				t.Errorf("error = %s\nwant    %s", f.errDoc, tc.err)
			}
		})
	}
}

func behave(mode string) string {
	return `{"tool_code":"tool","operation":"behave","parameters":{"operation":"behave","text":"","mode":"` + mode + `"}}`
}

func TestErrorMessageClipped(t *testing.T) {
	usePackage(t, toolPackage())
	_, err := Invoke([]byte(behave("long")))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Invoke error = %v", err)
	}
	if len(e.Message) > MaxMessageBytes || !utf8.ValidString(e.Message) || !strings.HasPrefix(e.Message, "éé") {
		t.Errorf("message of %d bytes, valid UTF-8 %v", len(e.Message), utf8.ValidString(e.Message))
	}
	if len(e.Message) != 512 {
		t.Errorf("message of %d bytes, want 512 (256 two-byte characters)", len(e.Message))
	}
}

func TestLogf(t *testing.T) {
	usePackage(t, toolPackage())
	f := useFake(t)
	f.input = []byte(behave("log"))
	if rc := runCompute(); rc != 0 {
		t.Fatalf("rc = %d, error %s", rc, f.errDoc)
	}
	if len(f.logs) != 1 || f.logs[0] != "hello 42" {
		t.Errorf("logs = %q", f.logs)
	}
	if len(f.blocks) != 1 { // the output's block; the log block was freed
		t.Errorf("%d live blocks, want 1", len(f.blocks))
	}
}

func TestNotRegistered(t *testing.T) {
	usePackage(t, Package{})
	registration.registered = false
	_, err := Invoke([]byte(behave("ok")))
	if err == nil || !strings.Contains(err.Error(), "call guest.Register") {
		t.Fatalf("Invoke error = %v", err)
	}
}

// TestByteTransfer moves inputs and outputs of every length around the
// 8-byte step through the fake host.
func TestByteTransfer(t *testing.T) {
	f := useFake(t)
	for n := range 40 {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*37 + n)
		}
		f.input = b
		if got := readInput(); string(got) != string(b) {
			t.Fatalf("readInput of %d bytes = %v", n, got)
		}
		off, ok := store(b)
		if n == 0 {
			if ok {
				t.Fatal("stored an empty block")
			}
			continue
		}
		if !ok || f.blocks[off] != uint64(n) || string(f.mem[off:off+uint64(n)]) != string(b) {
			t.Fatalf("store of %d bytes: ok %v", n, ok)
		}
	}
}

func TestEncodeNonFinite(t *testing.T) {
	svc, err := testService("tool", ops("echo", "repeat", "behave"), toolCompute).compile(false)
	if err != nil {
		t.Fatal(err)
	}
	out := toolOut{Ratio: math.NaN()}
	_, e := encodeResult(reflect.ValueOf(out), svc.out, "echo")
	if e == nil || e.message() != "result/ratio: not a finite number" {
		t.Fatalf("encodeResult error = %v", e)
	}
}

func TestFloatFormat(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		bits int
		want string
	}{
		{0, 64, "0"}, {1, 64, "1"}, {-0.5, 64, "-0.5"}, {1e21, 64, "1e+21"}, {1e-7, 64, "1e-7"},
		{123456789, 64, "123456789"}, {0.1, 32, "0.1"}, {3.4e38, 32, "3.4e+38"},
	} {
		if got := string(appendFloat(nil, tc.f, tc.bits)); got != tc.want {
			t.Errorf("appendFloat(%v, %d) = %s, want %s", tc.f, tc.bits, got, tc.want)
		}
	}
}
