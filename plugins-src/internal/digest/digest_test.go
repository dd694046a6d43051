package digest

import (
	"errors"
	"testing"
)

func TestSum(t *testing.T) {
	tests := []struct {
		name string
		text string
		o    Options
		want string
	}{
		// Test vectors from RFC 1321, FIPS 180 and RFC 4231.
		{name: "md5 abc", text: "abc", o: Options{Algorithm: MD5, Encoding: Hex}, want: "900150983cd24fb0d6963f7d28e17f72"},
		{name: "md5 empty", text: "", o: Options{Algorithm: MD5, Encoding: Hex}, want: "d41d8cd98f00b204e9800998ecf8427e"},
		{name: "sha1 abc", text: "abc", o: Options{Algorithm: SHA1, Encoding: Hex}, want: "a9993e364706816aba3e25717850c26c9cd0d89d"},
		{name: "sha256 abc", text: "abc", o: Options{Algorithm: SHA256, Encoding: Hex},
			want: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{name: "sha256 empty", text: "", o: Options{Algorithm: SHA256, Encoding: Hex},
			want: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{name: "sha512 abc", text: "abc", o: Options{Algorithm: SHA512, Encoding: Hex},
			want: "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"},
		{name: "sha256 base64", text: "abc", o: Options{Algorithm: SHA256, Encoding: Base64},
			want: "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="},
		{name: "utf-8 bytes are hashed", text: "é", o: Options{Algorithm: MD5, Encoding: Hex}, want: "66ddcd97cfdeabb2f6fb8a999b4bc76f"},
		{name: "unicode", text: "é😀中", o: Options{Algorithm: SHA256, Encoding: Hex},
			want: "fec0e4d258099829d5bffb1aaf8cc362a5f79a762115b6daf5cda91cea5dc6c8"},
		{name: "hmac sha512 unicode key", text: "données", o: Options{Algorithm: SHA512, Encoding: Hex, HMAC: true, Key: "clé"},
			want: "249f9d77b9558d3c8c2d97eef580db809bd1de94001c3fad7b723118b4c82905f97c15f5066b8181529ab4ccae864ca2acb7eb830c24318f2c0a43de3bf59ef4"},
		{name: "hmac sha256 rfc 4231 case 2", text: "what do ya want for nothing?",
			o:    Options{Algorithm: SHA256, Encoding: Hex, HMAC: true, Key: "Jefe"},
			want: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
		{name: "hmac md5 rfc 2104", text: "what do ya want for nothing?",
			o:    Options{Algorithm: MD5, Encoding: Hex, HMAC: true, Key: "Jefe"},
			want: "750c783e6ab0b503eaa86e310a5db738"},
		{name: "hmac with empty key differs from plain", text: "abc",
			o:    Options{Algorithm: SHA256, Encoding: Hex, HMAC: true, Key: ""},
			want: "fd7adb152c05ef80dccf50a1fa4c05d5a3ec6da95575fc312ae7c5d091836351"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Sum(tt.text, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Sum = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestSumRefusals(t *testing.T) {
	if _, err := Sum("x", Options{Algorithm: "crc32", Encoding: Hex}); !errors.Is(err, ErrAlgorithm) {
		t.Errorf("crc32: %v", err)
	}
	if _, err := Sum("x", Options{Algorithm: MD5, Encoding: "base32"}); !errors.Is(err, ErrEncoding) {
		t.Errorf("base32: %v", err)
	}
}
