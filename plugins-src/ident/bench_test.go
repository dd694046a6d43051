package main

import (
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/bundledtest"
)

// BenchmarkFreshItem is one tiny item of each service through the whole
// per-item path — strict decoding, input validation, an instance from the
// pre-initialised image (fresh, then pooled), compute, output validation
// and encoding — on the module as make wasm builds it (-tags guestgen). It
// reports the median item (median-µs) and the item's fuel (Mfuel).
//
//	go test ./plugins-src/ident -run '^$' -bench FreshItem -benchtime 50x
func BenchmarkFreshItem(b *testing.B) {
	items := []bundledtest.BenchItem{
		{Name: "hex", Code: "hex", Params: `{"operation":"encode","text":"Héllo"}`},
		{Name: "base32", Code: "base32", Params: `{"operation":"decode","text":"MZXW6YTBOI======"}`},
		{Name: "base58", Code: "base58", Params: `{"operation":"encode","text":"simply a long string"}`},
		{Name: "hmac", Code: "hmac", Params: `{"operation":"sign","text":"what do ya want for nothing?","key":"Jefe","algorithm":"sha256"}`},
		{Name: "checksum", Code: "checksum", Params: `{"operation":"compute","text":"123456789","algorithm":"crc32"}`},
		{Name: "uuid", Code: "uuid", Params: `{"operation":"v5","namespace":"dns","name":"www.example.com"}`},
		{Name: "jwt", Code: "jwt", Params: `{"operation":"verify","token":"` + rfcJWT + `","secret":"AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow","secret_encoding":"base64url"}`},
		{Name: "number_base", Code: "number_base", Params: `{"operation":"convert","value":"340282366920938463463374607431768211455","from":10,"to":36}`},
		{Name: "unix_time", Code: "unix_time", Params: `{"operation":"to_rfc3339","timestamp":851042397,"offset":"-08:00"}`},
		{Name: "color", Code: "color", Params: `{"operation":"convert","color":"hsl(120deg 100% 25%)"}`},
		{Name: "semver", Code: "semver", Params: `{"operation":"match","version":"1.9.9","range":"^1.2.3 || >=3"}`},
		{Name: "ip_cidr", Code: "ip_cidr", Params: `{"operation":"describe","cidr":"2001:db8::/32"}`},
	}
	bundledtest.BenchItems(b, "ident", items)
}
