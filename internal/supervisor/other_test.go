//go:build !linux

package supervisor

import (
	"context"
	"errors"
	"testing"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/toolerr"
)

func TestUnavailable(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if s.MemoryMode() != engine.MemoryUnavailable {
		t.Errorf("mode %s", s.MemoryMode())
	}
	if _, err := New(Config{MemoryMode: engine.MemoryCgroupV1Hard}); !errors.Is(err, ErrModeUnavailable) {
		t.Errorf("forced cgroup mode: %v", err)
	}
	if WorkerMain(nil) == 0 {
		t.Error("WorkerMain ran")
	}
	pkg := &native.Package{Name: "x", Declaration: []byte(`{`), Compute: func(*native.Context, native.Call) ([]byte, error) { return nil, nil }}
	if _, err := s.Runner(pkg).Run(context.Background(), engine.Job{ToolCode: "x"}); err == nil {
		t.Error("Run succeeded")
	} else if code, _ := toolerr.CodeOf(err); code != toolerr.ToolUnavailable {
		t.Errorf("Run: %v", err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Error(err)
	}
}
