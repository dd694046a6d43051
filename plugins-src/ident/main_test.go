package main

import (
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/bundledtest"
	"github.com/toolhost/toolhost/plugins-src/internal/binenc"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
)

func TestDeclaration(t *testing.T) {
	tools := load(t)
	for code, ops := range map[string][]string{"hex": {"encode", "decode"}, "base32": {"encode", "decode"}, "hmac": {"sign", "verify"}, "checksum": {"compute"}} {
		for _, op := range ops {
			if got := tools.MaxLength(code, op, "text"); got != bundled.MaxTextLength {
				t.Errorf("%s/%s text maxLength = %d", code, op, got)
			}
		}
	}
	if got := tools.MaxLength("base58", "encode", "text"); got != 16384 {
		t.Errorf("base58 text maxLength = %d", got)
	}
}

// RFC 4648 §10's vectors.
func TestHex(t *testing.T) {
	tools := load(t)
	runVectors(t, tools, "hex", []vector{
		{"encode", `{"operation":"encode","text":"foobar"}`, `{"text":"666f6f626172"}`},
		{"encode upper", `{"operation":"encode","text":"é😀","case":"upper"}`, `{"text":"C3A9F09F9880"}`},
		{"decode", `{"operation":"decode","text":"666F6F626172"}`, `{"text":"foobar"}`},
		{"decode spaced", `{"operation":"decode","text":"c3 a9\nf0 9f 98 80"}`, `{"text":"é😀"}`},
		{"empty", `{"operation":"decode","text":""}`, `{"text":""}`},
	})
	runFaults(t, tools, "hex", map[string]string{
		`{"operation":"decode","text":"66 6g"}`: "text is not valid hex: character is not a hex digit at line 1, column 5 (byte 4)",
		`{"operation":"decode","text":"666"}`:   "text is not valid hex: odd number of hex digits: the last byte is incomplete at line 1, column 3 (byte 2)",
		`{"operation":"decode","text":"ff"}`:    "decoded bytes are not UTF-8 text: first invalid byte at offset 0 of the decoded data (this tool returns text only)",
	})
	tools.Refused(t, "hex", `{"operation":"decode","text":"66","case":"upper"}`)
	tools.Refused(t, "hex", `{"operation":"encode","text":"f","case":"title"}`)
}

// RFC 4648 §10's vectors, both alphabets.
func TestBase32(t *testing.T) {
	tools := load(t)
	runVectors(t, tools, "base32", []vector{
		{"encode", `{"operation":"encode","text":"foobar"}`, `{"text":"MZXW6YTBOI======"}`},
		{"encode hex", `{"operation":"encode","text":"foobar","alphabet":"hex"}`, `{"text":"CPNMUOJ1E8======"}`},
		{"encode unpadded", `{"operation":"encode","text":"foob","padding":false}`, `{"text":"MZXW6YQ"}`},
		{"decode", `{"operation":"decode","text":"MZXW6YQ="}`, `{"text":"foob"}`},
		{"decode lower wrapped", `{"operation":"decode","text":"mzxw6ytb\r\noi======"}`, `{"text":"foobar"}`},
		{"decode hex unpadded", `{"operation":"decode","text":"CPNMUOG","alphabet":"hex","padding":false}`, `{"text":"foob"}`},
	})
	runFaults(t, tools, "base32", map[string]string{
		`{"operation":"decode","text":"MZXW6YQ"}`:                   "text is not valid base32: missing '=' padding at the end at line 1, column 8 (byte 7)",
		`{"operation":"decode","text":"MZXW6YQ=","padding":false}`:  "text is not valid base32: '=' padding found, but padding is off at line 1, column 8 (byte 7)",
		`{"operation":"decode","text":"MZXW6YW=","alphabet":"hex"}`: "text is not valid base32hex: character not in the base32 alphabet at line 1, column 2 (byte 1)",
		`{"operation":"decode","text":"MZX====="}`:                  "text is not valid base32: '=' padding where no padding can be at line 1, column 4 (byte 3)",
		`{"operation":"decode","text":"74======"}`:                  "decoded bytes are not UTF-8 text: first invalid byte at offset 0 of the decoded data (this tool returns text only)",
	})
	tools.Refused(t, "base32", `{"operation":"encode","text":"x","alphabet":"crockford"}`)
}

// Bitcoin Core's base58_encode_decode.json vectors (the UTF-8 ones).
func TestBase58(t *testing.T) {
	tools := load(t)
	runVectors(t, tools, "base58", []vector{
		{"encode", `{"operation":"encode","text":"simply a long string"}`, `{"text":"2cFupjhnEsSn59qHXstmK2ffpLv2"}`},
		{"encode zeros", `{"operation":"encode","text":"\u0000\u0000a"}`, `{"text":"112g"}`},
		{"decode", `{"operation":"decode","text":"a3gV"}`, `{"text":"bbb"}`},
		{"empty", `{"operation":"encode","text":""}`, `{"text":""}`},
	})
	runFaults(t, tools, "base58", map[string]string{
		`{"operation":"decode","text":"a3gO"}`:                               "text is not valid base58: 0, O, I and l are not in the base58 alphabet at line 1, column 4 (byte 3)",
		`{"operation":"decode","text":"1NS17iag9jJgTHD1VXjvLCEnZuQ3rJDE9L"}`: "decoded bytes are not UTF-8 text: first invalid byte at offset 1 of the decoded data (this tool returns text only)",
		`{"operation":"encode","text":"` + strings.Repeat("é", 8193) + `"}`:  "text is over base58's bound of 16 KiB (16,384 bytes of UTF-8)",
	})
	tools.Refused(t, "base58", `{"operation":"encode","text":"`+strings.Repeat("a", 16385)+`"}`)
}

// RFC 4231 §4.2–4.3 and RFC 2202 §3, test cases 1 and 2.
func TestHMAC(t *testing.T) {
	tools := load(t)
	key := strings.Repeat("0b", 20)
	runVectors(t, tools, "hmac", []vector{
		{"sha256 hex key", `{"operation":"sign","text":"Hi There","key":"` + key + `","key_encoding":"hex","algorithm":"sha256"}`, `{"mac":"b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"}`},
		{"sha512 text key", `{"operation":"sign","text":"what do ya want for nothing?","key":"Jefe","algorithm":"sha512"}`, `{"mac":"164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"}`},
		{"sha1", `{"operation":"sign","text":"what do ya want for nothing?","key":"Jefe","algorithm":"sha1"}`, `{"mac":"effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"}`},
		{"sha256 base64", `{"operation":"sign","text":"what do ya want for nothing?","key":"Jefe","algorithm":"sha256","encoding":"base64"}`, `{"mac":"W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM="}`},
		{"verify", `{"operation":"verify","text":"Hi There","key":"` + key + `","key_encoding":"hex","algorithm":"sha1","mac":"B617318655057264E28BC0B6FB378C8EF146BE00"}`, `{"valid":true}`},
		{"verify wrong", `{"operation":"verify","text":"Hi there","key":"` + key + `","key_encoding":"hex","algorithm":"sha1","mac":"b617318655057264e28bc0b6fb378c8ef146be00"}`, `{"valid":false}`},
	})
	runFaults(t, tools, "hmac", map[string]string{
		`{"operation":"sign","text":"x","key":"0x0b","key_encoding":"hex","algorithm":"sha256"}`: "key is not valid hex: character is not a hex digit at line 1, column 2 (byte 1)",
		`{"operation":"verify","text":"x","key":"k","algorithm":"sha256","mac":"abcd"}`:          "mac has the wrong length for the algorithm",
		`{"operation":"verify","text":"x","key":"k","algorithm":"sha256","mac":"zz"}`:            "mac is not valid hex: character is not a hex digit at line 1, column 1 (byte 0)",
	})
	tools.Refused(t, "hmac", `{"operation":"sign","text":"x","key":"k","algorithm":"md5"}`)
	tools.Refused(t, "hmac", `{"operation":"verify","text":"x","key":"k","algorithm":"sha1"}`)
	tools.Refused(t, "hmac", `{"operation":"sign","text":"x","key":"k","algorithm":"sha1","mac":"00"}`)
}

// The CRC catalogue's check values and RFC 1950's Adler-32.
func TestChecksum(t *testing.T) {
	tools := load(t)
	runVectors(t, tools, "checksum", []vector{
		{"crc32", `{"operation":"compute","text":"123456789","algorithm":"crc32"}`, `{"hex":"cbf43926","value":3421780262}`},
		{"crc32c", `{"operation":"compute","text":"123456789","algorithm":"crc32c"}`, `{"hex":"e3069283","value":3808858755}`},
		{"adler32", `{"operation":"compute","text":"Wikipedia","algorithm":"adler32"}`, `{"hex":"11e60398","value":300286872}`},
		{"empty adler32", `{"operation":"compute","text":"","algorithm":"adler32"}`, `{"hex":"00000001","value":1}`},
	})
	tools.Refused(t, "checksum", `{"operation":"compute","text":"x","algorithm":"crc16"}`)
	tools.Refused(t, "checksum", `{"operation":"compute","text":"x"}`)
}

// Values checked with Python's arbitrary-precision int.
func TestNumberBase(t *testing.T) {
	tools := load(t)
	runVectors(t, tools, "number_base", []vector{
		{"dec to hex", `{"operation":"convert","value":"255","from":10,"to":16}`, `{"value":"ff"}`},
		{"upper", `{"operation":"convert","value":"255","from":10,"to":16,"case":"upper"}`, `{"value":"FF"}`},
		{"negative bin", `{"operation":"convert","value":"-101","from":2,"to":10}`, `{"value":"-5"}`},
		{"2^128-1 to base 36", `{"operation":"convert","value":"340282366920938463463374607431768211455","from":10,"to":36}`, `{"value":"f5lxx1zz5pnorynqglhzmsp33"}`},
		{"leading zeros", `{"operation":"convert","value":"000ZZ","from":36,"to":10}`, `{"value":"1295"}`},
	})
	runFaults(t, tools, "number_base", map[string]string{
		`{"operation":"convert","value":"12a","from":10,"to":2}`:   "value is not a base-10 integer: digit not valid in base 10 at line 1, column 3 (byte 2)",
		`{"operation":"convert","value":"0x1f","from":16,"to":2}`:  "value is not a base-16 integer: digit not valid in base 16 at line 1, column 2 (byte 1)",
		`{"operation":"convert","value":"1_000","from":10,"to":2}`: "value is not a base-10 integer: not a digit (0-9, a-z) at line 1, column 2 (byte 1)",
		`{"operation":"convert","value":"-","from":10,"to":2}`:     "value is not a base-10 integer: no digits at line 1, column 2 (byte 1)",
	})
	tools.Refused(t, "number_base", `{"operation":"convert","value":"1","from":1,"to":10}`)
	tools.Refused(t, "number_base", `{"operation":"convert","value":"1","from":10,"to":37}`)
	tools.Refused(t, "number_base", `{"operation":"convert","value":"","from":10,"to":2}`)
}

// RFC 3339 §5.8's examples.
func TestUnixTime(t *testing.T) {
	tools := load(t)
	runVectors(t, tools, "unix_time", []vector{
		{"seconds", `{"operation":"to_rfc3339","timestamp":851042397,"offset":"-08:00"}`, `{"text":"1996-12-19T16:39:57-08:00"}`},
		{"milliseconds", `{"operation":"to_rfc3339","timestamp":482196050520,"unit":"ms"}`, `{"text":"1985-04-12T23:20:50.52Z"}`},
		{"nanoseconds", `{"operation":"to_rfc3339","timestamp":1700000000123456789,"unit":"ns","offset":"+05:30"}`, `{"text":"2023-11-15T03:43:20.123456789+05:30"}`},
		{"before the epoch", `{"operation":"to_rfc3339","timestamp":-1}`, `{"text":"1969-12-31T23:59:59Z"}`},
		{"parse", `{"operation":"from_rfc3339","text":"1996-12-19T16:39:57-08:00"}`, `{"seconds":851042397,"milliseconds":851042397000,"nanosecond":0,"utc":"1996-12-20T00:39:57Z"}`},
		{"parse fraction", `{"operation":"from_rfc3339","text":"1985-04-12T23:20:50.52Z"}`, `{"seconds":482196050,"milliseconds":482196050520,"nanosecond":520000000,"utc":"1985-04-12T23:20:50.52Z"}`},
	})
	runFaults(t, tools, "unix_time", map[string]string{
		`{"operation":"to_rfc3339","timestamp":253402300800}`:        "the instant is outside the years 0000 to 9999 that RFC 3339 can write",
		`{"operation":"to_rfc3339","timestamp":0,"offset":"+24:00"}`: "offset must be Z or +HH:MM / -HH:MM with hours 00-23 and minutes 00-59",
		`{"operation":"from_rfc3339","text":"1990-12-31T23:59:60Z"}`: "text is not an RFC 3339 date-time such as 2006-01-02T15:04:05Z or 2006-01-02T15:04:05.5+02:00",
		`{"operation":"from_rfc3339","text":"2023-11-14 22:13:20"}`:  "text is not an RFC 3339 date-time such as 2006-01-02T15:04:05Z or 2006-01-02T15:04:05.5+02:00",
	})
	tools.Refused(t, "unix_time", `{"operation":"to_rfc3339","timestamp":0,"offset":"Europe/Rome"}`)
	tools.Refused(t, "unix_time", `{"operation":"to_rfc3339","timestamp":1.5}`)
	tools.Refused(t, "unix_time", `{"operation":"from_rfc3339","timestamp":0}`)
}

// RFC 1918, RFC 3021 and RFC 3849 blocks, as ipcalc(1) describes them.
func TestIPCIDR(t *testing.T) {
	tools := load(t)
	runVectors(t, tools, "ip_cidr", []vector{
		{"ipv4", `{"operation":"describe","cidr":"192.168.1.77/24"}`, `{"network":"192.168.1.0/24","version":4,"address":"192.168.1.77","prefix_length":24,"netmask":"255.255.255.0","first":"192.168.1.0","last":"192.168.1.255","broadcast":"192.168.1.255","first_host":"192.168.1.1","last_host":"192.168.1.254","addresses":"256","hosts":"254"}`},
		{"ipv4 /31", `{"operation":"describe","cidr":"198.51.100.6/31"}`, `{"network":"198.51.100.6/31","version":4,"address":"198.51.100.6","prefix_length":31,"netmask":"255.255.255.254","first":"198.51.100.6","last":"198.51.100.7","first_host":"198.51.100.6","last_host":"198.51.100.7","addresses":"2","hosts":"2"}`},
		{"ipv6", `{"operation":"describe","cidr":"2001:DB8::1/32"}`, `{"network":"2001:db8::/32","version":6,"address":"2001:db8::1","prefix_length":32,"netmask":"ffff:ffff::","first":"2001:db8::","last":"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff","first_host":"2001:db8::","last_host":"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff","addresses":"79228162514264337593543950336","hosts":"79228162514264337593543950336"}`},
		{"contains", `{"operation":"contains","cidr":"10.0.0.0/8","address":"10.200.0.1"}`, `{"network":"10.0.0.0/8","contains":true}`},
		{"other family", `{"operation":"contains","cidr":"::/0","address":"10.200.0.1"}`, `{"network":"::/0","contains":false}`},
	})
	runFaults(t, tools, "ip_cidr", map[string]string{
		`{"operation":"describe","cidr":"192.168.1.0/33"}`:                    "cidr is not an IPv4 or IPv6 block such as 192.168.1.0/24 or 2001:db8::/32",
		`{"operation":"contains","cidr":"10.0.0.0/8","address":"10.0.0.0/8"}`: "address is not an IPv4 or IPv6 address",
	})
	tools.Refused(t, "ip_cidr", `{"operation":"describe","cidr":"10.0.0.0/8","address":"10.0.0.1"}`)
}

// TestWASM runs items natively and in the built module: the same bytes.
// The bounded tools run at their bounds (base58's 16 KiB both ways,
// number_base's 4,096 digits) on the default fuel budget.
func TestWASM(t *testing.T) {
	tools := load(t)
	maxBase58, err := binenc.Base58Encode(strings.Repeat("a", 11900))
	if err != nil || len(maxBase58) > 16384 {
		t.Fatalf("%d characters, %v", len(maxBase58), err)
	}
	mod := bundledtest.Module(t, "ident")
	long := strings.Repeat("Héllo wörld & Привет 中文 😀 ", 1000)
	for code, items := range map[string][]string{
		"hex":         {`{"operation":"encode","text":"` + long + `"}`, `{"operation":"decode","text":"c3 a9"}`, `{"operation":"decode","text":"zz"}`},
		"base32":      {`{"operation":"encode","text":"` + long + `","alphabet":"hex"}`, `{"operation":"decode","text":"MZXW6YQ="}`, `{"operation":"decode","text":"MZXW6YQ"}`},
		"base58":      {`{"operation":"encode","text":"` + strings.Repeat("é", 8192) + `"}`, `{"operation":"decode","text":"` + maxBase58 + `"}`, `{"operation":"decode","text":"2cFupjhnEsSn59qHXstmK2ffpLv2"}`, `{"operation":"decode","text":"0"}`},
		"hmac":        {`{"operation":"sign","text":"` + long + `","key":"clé","algorithm":"sha512","encoding":"base64"}`, `{"operation":"verify","text":"x","key":"00","key_encoding":"hex","algorithm":"sha1","mac":"00"}`},
		"checksum":    {`{"operation":"compute","text":"` + long + `","algorithm":"crc32c"}`, `{"operation":"compute","text":"Wikipedia","algorithm":"adler32"}`},
		"number_base": {`{"operation":"convert","value":"` + strings.Repeat("z", 4096) + `","from":36,"to":7}`, `{"operation":"convert","value":"12a","from":10,"to":2}`},
		"unix_time":   {`{"operation":"to_rfc3339","timestamp":1700000000123456789,"unit":"ns","offset":"+05:30"}`, `{"operation":"from_rfc3339","text":"1996-12-19T16:39:57-08:00"}`, `{"operation":"from_rfc3339","text":"x"}`},
		"uuid":        {`{"operation":"inspect","uuid":"1EC9414C-232A-6B00-B3C8-9F6BDECED846"}`, `{"operation":"v5","namespace":"url","name":"` + long + `"}`, `{"operation":"inspect","uuid":"x"}`},
		"jwt":         {`{"operation":"decode","token":"` + rfcJWT + `"}`, `{"operation":"verify","token":"` + rfcJWT + `","secret":"AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow","secret_encoding":"base64url"}`, `{"operation":"decode","token":"a.b"}`},
		"color":       {`{"operation":"convert","color":"#7fffd480"}`, `{"operation":"convert","color":"oklch(0.7 0.4 150)"}`, `{"operation":"convert","color":"hsl(-120, 50%, 50%)"}`, `{"operation":"convert","color":"rgb(12.5% 50% 87.5%)"}`, `{"operation":"convert","color":"nope"}`},
		"semver":      {`{"operation":"compare","a":"1.0.0-rc.1","b":"1.0.0"}`, `{"operation":"match","version":"1.4.5","range":"1.2 - 1.4.5 || ~2.1"}`, `{"operation":"match","version":"x","range":"*"}`},
		"ip_cidr":     {`{"operation":"describe","cidr":"::/0"}`, `{"operation":"describe","cidr":"10.1.2.3/30"}`, `{"operation":"contains","cidr":"2001:db8::/32","address":"2001:db8::1"}`},
	} {
		for _, params := range items {
			tools.Same(t, mod, code, params)
		}
	}
}

func TestDocs(t *testing.T) {
	tools := load(t)
	for _, code := range codes {
		tools.CheckDocs(t, "../../docs/tools/"+code+".md", code)
	}
}
