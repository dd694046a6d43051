package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseStatusBytes(t *testing.T) {
	const status = "Name:\ttoolhost\nVmPeak:\t  2000 kB\nVmHWM:\t  234567 kB\nVmRSS:\t  123456 kB\nThreads:\t9\n"
	tests := []struct {
		name    string
		status  string
		field   string
		want    int64
		wantErr bool
	}{
		{name: "VmRSS", status: status, field: "VmRSS", want: 123456 * 1024},
		{name: "VmHWM", status: status, field: "VmHWM", want: 234567 * 1024},
		{name: "no line", status: "Name:\ttoolhost\n", field: "VmRSS", wantErr: true},
		{name: "other unit", status: "VmRSS:\t12 MB\n", field: "VmRSS", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatusBytes(strings.NewReader(tt.status), tt.field)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("parseStatusBytes(%s) = %d, %v; want %d, error %v", tt.field, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// TestVmRSSSelf reads this process's own VmRSS and VmHWM, where /proc
// exists.
func TestVmRSSSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc here")
	}
	for _, field := range []string{"VmRSS", "VmHWM"} {
		n, err := statusBytes(os.Getpid(), field)
		if err != nil || n <= 0 {
			t.Fatalf("statusBytes(self, %s) = %d, %v", field, n, err)
		}
	}
}

func TestSpread(t *testing.T) {
	tests := []struct {
		name string
		ds   []time.Duration
		want string
	}{
		{name: "none", want: "—"},
		{name: "one", ds: []time.Duration{190 * time.Millisecond}, want: "0.19 s"},
		{name: "three", ds: []time.Duration{3 * time.Second, 1 * time.Second, 2 * time.Second}, want: "2.00 s (1.00–3.00)"},
		{name: "long", ds: []time.Duration{12340 * time.Millisecond}, want: "12.3 s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := spread(tt.ds); got != tt.want {
				t.Fatalf("spread = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseStatCPU(t *testing.T) {
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
	stat := "4242 (tool host) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 30 0 0 20 0 9 0 123 456 789\n"
	got, err := parseStatCPU(stat)
	if err != nil || got != 2800*time.Millisecond {
		t.Fatalf("parseStatCPU = %v, %v; want 2.8s", got, err)
	}
	if _, err := parseStatCPU("garbage"); err == nil {
		t.Fatal("parseStatCPU(garbage) succeeded")
	}
}
