package toolerr_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/toolerr"
)

// The contract's rule, written out code by code.
func TestRetryableRule(t *testing.T) {
	retryable := map[toolerr.Code]bool{
		toolerr.QueueFull: true, toolerr.QueueTimeout: true, toolerr.ExecutionLimit: true,
		toolerr.ExecutionTimeout: true, toolerr.VersionMismatch: true, toolerr.ServiceUnavailable: true,
	}
	if len(toolerr.Codes) != 17 {
		t.Fatalf("%d codes, want the 16 of the contract plus invalid_operation_policy", len(toolerr.Codes))
	}
	for _, c := range toolerr.Codes {
		t.Run(string(c), func(t *testing.T) {
			if got := toolerr.New(c).Retryable; got != retryable[c] {
				t.Errorf("New(%s).Retryable = %v, want %v", c, got, retryable[c])
			}
			if !c.Known() {
				t.Errorf("%s is not Known", c)
			}
		})
	}
	if toolerr.Code("made_up").Known() {
		t.Error("an unlisted code is Known")
	}
	// The worker's non-POSIX guard and a tool's own errors set the flag.
	if toolerr.Raised(toolerr.ServiceUnavailable, false).Retryable {
		t.Error("Raised(service_unavailable, false) is retryable")
	}
	if !toolerr.Raised(toolerr.ExecutionFailed, true).Retryable {
		t.Error("Raised(execution_failed, true) lost its flag")
	}
}

func TestIssueSanitising(t *testing.T) {
	tests := []struct {
		name string
		path []string
		want []string
	}{
		{name: "plain names and indices", path: []string{"holdings", "0", "asset_id"}, want: []string{"holdings", "0", "asset_id"}},
		{name: "caller text redacted", path: []string{"a b", "x@example.com", "ok"}, want: []string{"*", "*", "ok"}},
		{name: "empty name redacted", path: []string{""}, want: []string{"*"}},
		{name: "long name redacted", path: []string{strings.Repeat("a", 65)}, want: []string{"*"}},
		{name: "64 bytes kept", path: []string{strings.Repeat("a", 64)}, want: []string{strings.Repeat("a", 64)}},
		{name: "nil path encodes as empty", path: nil, want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := toolerr.NewIssue("type", tt.path...)
			if fmt.Sprint(got.Path) != fmt.Sprint(tt.want) || got.Path == nil {
				t.Errorf("path %q, want %q", got.Path, tt.want)
			}
		})
	}
	deep := make([]string, 40)
	for i := range deep {
		deep[i] = strconv.Itoa(i)
	}
	if got := toolerr.NewIssue("type", deep...).Path; len(got) != toolerr.MaxPathSegments || got[15] != "15" {
		t.Errorf("deep path kept %d segments (%v), want the first 16", len(got), got)
	}
}

func TestIssueBounds(t *testing.T) {
	issues := make([]toolerr.Issue, 40)
	for i := range issues {
		issues[i] = toolerr.NewIssue("required", strconv.Itoa(i))
	}
	e := toolerr.New(toolerr.InvalidParameters, issues...)
	if len(e.Issues) != toolerr.MaxIssues || e.IssueCount != 40 {
		t.Fatalf("kept %d issues, count %d; want 32 and 40", len(e.Issues), e.IssueCount)
	}
	issues[0].Code = "changed"
	if e.Issues[0].Code != "required" {
		t.Error("the Error shares its issues with the caller's slice")
	}
	b, err := json.Marshal(toolerr.New(toolerr.QueueFull))
	if err != nil || string(b) != `{"code":"queue_full","retryable":true,"issues":[],"issue_count":0}` {
		t.Errorf("JSON = %s, %v", b, err)
	}
}

func TestErrorsIsAndCodeOf(t *testing.T) {
	err := fmt.Errorf("running item: %w", toolerr.New(toolerr.ExecutionTimeout))
	if !errors.Is(err, toolerr.New(toolerr.ExecutionTimeout)) {
		t.Error("errors.Is does not match the same code through a wrap")
	}
	if errors.Is(err, toolerr.New(toolerr.ExecutionLimit)) {
		t.Error("errors.Is matches a different code")
	}
	if c, ok := toolerr.CodeOf(err); !ok || c != toolerr.ExecutionTimeout {
		t.Errorf("CodeOf = %q, %v", c, ok)
	}
	if _, ok := toolerr.CodeOf(errors.New("plain")); ok {
		t.Error("CodeOf found a code in a plain error")
	}
}
