package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/wasmtool"
)

// BenchmarkFreshItem is one tiny item of each service through the whole
// per-item path — strict decoding, input validation, a fresh instance from
// the pre-initialised image, compute, output validation and encoding — on
// the module as make wasm builds it (-tags guestgen). It reports the median
// item (median-µs) and the item's fuel.
//
//	go test ./plugins-src/ident -run '^$' -bench FreshItem -benchtime 50x
func BenchmarkFreshItem(b *testing.B) {
	ctx := context.Background()
	tmp := b.TempDir()
	out := filepath.Join(tmp, "ident.wasm")
	cmd := exec.Command("go", "build", "-trimpath", "-tags", "guestgen", "-buildmode=c-shared", "-o", out, ".")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building: %v\n%s", err, msg)
	}
	rt, err := host.NewRuntime(ctx, host.Config{CacheDir: filepath.Join(tmp, "cache"), FreshInstances: true})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close(ctx)
	l, err := wasmtool.NewLoader(rt, wasmtool.Config{Platform: policy.DefaultPlatform()})
	if err != nil {
		b.Fatal(err)
	}
	tool, err := l.LoadFile(ctx, out)
	if err != nil {
		b.Fatal(err)
	}
	defer tool.Close(ctx)
	for _, item := range []struct{ name, code, params string }{
		{"hex", "hex", `{"operation":"encode","text":"Héllo"}`},
		{"base32", "base32", `{"operation":"decode","text":"MZXW6YTBOI======"}`},
		{"base58", "base58", `{"operation":"encode","text":"simply a long string"}`},
		{"hmac", "hmac", `{"operation":"sign","text":"what do ya want for nothing?","key":"Jefe","algorithm":"sha256"}`},
		{"checksum", "checksum", `{"operation":"compute","text":"123456789","algorithm":"crc32"}`},
		{"uuid", "uuid", `{"operation":"v5","namespace":"dns","name":"www.example.com"}`},
		{"jwt", "jwt", `{"operation":"verify","token":"` + rfcJWT + `","secret":"AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow","secret_encoding":"base64url"}`},
		{"number_base", "number_base", `{"operation":"convert","value":"340282366920938463463374607431768211455","from":10,"to":36}`},
		{"unix_time", "unix_time", `{"operation":"to_rfc3339","timestamp":851042397,"offset":"-08:00"}`},
		{"color", "color", `{"operation":"convert","color":"hsl(120deg 100% 25%)"}`},
		{"semver", "semver", `{"operation":"match","version":"1.9.9","range":"^1.2.3 || >=3"}`},
		{"ip_cidr", "ip_cidr", `{"operation":"describe","cidr":"2001:db8::/32"}`},
	} {
		b.Run(item.name, func(b *testing.B) {
			var times []time.Duration
			var fuel int64
			for b.Loop() {
				start := time.Now()
				o, err := tool.Run(ctx, item.code, []byte(item.params), wasmtool.Deadlines{})
				if err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(start))
				fuel = o.FuelUsed
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds()), "median-µs")
			b.ReportMetric(float64(fuel), "fuel")
		})
	}
}
