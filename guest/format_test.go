//go:build !guestgen

package guest

import (
	"errors"
	"fmt"
	"math"
	"testing"
)

type stringer struct{}

func (stringer) String() string { return "str" }

// sprintf agrees with fmt.Sprintf on the verbs and operands it supports.
func TestSprintfAgreesWithFmt(t *testing.T) {
	for _, tc := range []struct {
		format string
		args   []any
	}{
		{"plain", nil},
		{"%s at byte %d", []any{"text", 7}},
		{"%q", []any{"a\"b\n"}},
		{"%v %v %v", []any{true, -3, uint8(200)}},
		{"%v|%g|%e|%f|%.2f", []any{1.5, 1e21, 2.0, 3.25, math.Pi}},
		{"%v", []any{float32(0.1)}},
		{"%x %X %x", []any{255, 255, "hi"}},
		{"%5d|%-5d|%05d|%+d", []any{42, 42, -42, 42}},
		{"%c%c", []any{'é', 65}},
		{"%v %s", []any{errors.New("boom"), stringer{}}},
		{"%v", []any{nil}},
		{"%d%%", []any{50}},
		{"%.3s", []any{"abcdef"}},
		{"%8s|%-8s|", []any{"ab", "cd"}},
		{"%v", []any{math.Inf(1)}},
		{"%v", []any{int64(math.MinInt64)}},
	} {
		want := fmt.Sprintf(tc.format, tc.args...)
		if got := sprintf(tc.format, tc.args...); got != want {
			t.Errorf("sprintf(%q, %v) = %q, fmt says %q", tc.format, tc.args, got, want)
		}
	}
	if got := sprintf("%d %d", 1); got != "1 %!d(MISSING)" {
		t.Errorf("missing operand: %q", got)
	}
	if got := sprintf("%v", struct{}{}); got != "%!v(unsupported)" {
		t.Errorf("unsupported operand: %q", got)
	}
	if got := sprint(42); got != "42" {
		t.Errorf("sprint(42) = %q", got)
	}
}
