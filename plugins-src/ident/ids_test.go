package main

import (
	"testing"
)

// RFC 9562 Appendix A's vectors.
func TestUUID(t *testing.T) {
	tools := load(t)
	runVectors(t, tools, "uuid", []vector{
		{"v1", `{"operation":"inspect","uuid":"C232AB00-9414-11EC-B3C8-9F6BDECED846"}`, `{"uuid":"c232ab00-9414-11ec-b3c8-9f6bdeced846","urn":"urn:uuid:c232ab00-9414-11ec-b3c8-9f6bdeced846","version":1,"variant":"rfc9562","time":"2022-02-22T19:22:22Z"}`},
		{"v6 urn", `{"operation":"inspect","uuid":"urn:uuid:1EC9414C-232A-6B00-B3C8-9F6BDECED846"}`, `{"uuid":"1ec9414c-232a-6b00-b3c8-9f6bdeced846","urn":"urn:uuid:1ec9414c-232a-6b00-b3c8-9f6bdeced846","version":6,"variant":"rfc9562","time":"2022-02-22T19:22:22Z"}`},
		{"v7 no hyphens", `{"operation":"inspect","uuid":"017F22E279B07CC398C4DC0C0C07398F"}`, `{"uuid":"017f22e2-79b0-7cc3-98c4-dc0c0c07398f","urn":"urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f","version":7,"variant":"rfc9562","time":"2022-02-22T19:22:22Z"}`},
		{"v4", `{"operation":"inspect","uuid":"{919108f7-52d1-4320-9bac-f847db4148a8}"}`, `{"uuid":"919108f7-52d1-4320-9bac-f847db4148a8","urn":"urn:uuid:919108f7-52d1-4320-9bac-f847db4148a8","version":4,"variant":"rfc9562"}`},
		{"max", `{"operation":"inspect","uuid":"FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"}`, `{"uuid":"ffffffff-ffff-ffff-ffff-ffffffffffff","urn":"urn:uuid:ffffffff-ffff-ffff-ffff-ffffffffffff","version":15,"variant":"future","special":"max"}`},
		{"v3", `{"operation":"v3","namespace":"dns","name":"www.example.com"}`, `{"uuid":"5df41881-3aed-3515-88a7-2f4a814cf09e","urn":"urn:uuid:5df41881-3aed-3515-88a7-2f4a814cf09e"}`},
		{"v5", `{"operation":"v5","namespace":"6ba7b810-9dad-11d1-80b4-00c04fd430c8","name":"www.example.com"}`, `{"uuid":"2ed6657d-e927-568b-95e1-2665a8aea6a2","urn":"urn:uuid:2ed6657d-e927-568b-95e1-2665a8aea6a2"}`},
	})
	runFaults(t, tools, "uuid", map[string]string{
		`{"operation":"inspect","uuid":"c232ab00-9414-11ec-b3c8-9f6bdeced84"}`: "uuid is not a UUID (8-4-4-4-12 hex digits, optionally in braces or after urn:uuid:, or 32 hex digits)",
		`{"operation":"v5","namespace":"DNS","name":"x"}`:                      "namespace is not dns, url, oid, x500 or a UUID",
	})
	tools.Refused(t, "uuid", `{"operation":"inspect","uuid":"x","name":"y"}`)
	tools.Refused(t, "uuid", `{"operation":"v4"}`)
	tools.Refused(t, "uuid", `{"operation":"v5","namespace":"dns"}`)
}

// RFC 7515 Appendix A.1 (RFC 7519 §3.1's example) and RFC 7519 §6.1.
const rfcJWT = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

func TestJWT(t *testing.T) {
	tools := load(t)
	header := `"{\"typ\":\"JWT\",\r\n \"alg\":\"HS256\"}"`
	claims := `"{\"iss\":\"joe\",\r\n \"exp\":1300819380,\r\n \"http://example.com/is_root\":true}"`
	common := `"header":` + header + `,"claims":` + claims + `,"algorithm":"HS256","type":"JWT","expires_at":"2011-03-22T18:43:00Z"`
	runVectors(t, tools, "jwt", []vector{
		{"decode", `{"operation":"decode","token":"` + rfcJWT + `"}`, `{` + common + `,"notice":"` + noticeDecoded + `"}`},
		{"verify", `{"operation":"verify","token":"` + rfcJWT + `","secret":"AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow","secret_encoding":"base64url"}`, `{` + common + `,"valid":true,"notice":"` + noticeValid + `"}`},
		{"verify wrong secret", `{"operation":"verify","token":"` + rfcJWT + `","secret":"secret"}`, `{` + common + `,"valid":false,"notice":"` + noticeNotValid + `"}`},
	})
	none := "eyJhbGciOiJub25lIn0.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ."
	runFaults(t, tools, "jwt", map[string]string{
		`{"operation":"verify","token":"` + none + `","secret":"x"}`:                            "the token's header does not name HS256: this tool verifies HS256 only (and alg none is never valid)",
		`{"operation":"decode","token":"abc.def"}`:                                              "token is not a JWT: a signed JWT has three parts separated by '.', this has 2 at line 1, column 1 (byte 0)",
		`{"operation":"verify","token":"` + rfcJWT + `","secret":"0g","secret_encoding":"hex"}`: "secret is not valid hex: not a hex digit, or an odd number of digits at line 1, column 2 (byte 1)",
	})
	tools.Refused(t, "jwt", `{"operation":"decode","token":"a.b.c","secret":"x"}`)
	tools.Refused(t, "jwt", `{"operation":"verify","token":"a.b.c"}`)
}

// CSS Color 4's named-colour table and colorjs.io's OKLCh values (see
// internal/colorconv).
func TestColor(t *testing.T) {
	tools := load(t)
	runVectors(t, tools, "color", []vector{
		{"hex", `{"operation":"convert","color":"#ff0000"}`, `{"hex":"#ff0000","rgb":"rgb(255 0 0)","hsl":"hsl(0 100% 50%)","oklch":"oklch(62.8% 0.2577 29.23)","in_gamut":true}`},
		{"hsl", `{"operation":"convert","color":"hsl(120deg 100% 25%)"}`, `{"hex":"#008000","rgb":"rgb(0 128 0)","hsl":"hsl(120 100% 25%)","oklch":"oklch(51.83% 0.1764 142.5)","in_gamut":true}`},
		{"legacy rgba", `{"operation":"convert","color":"rgba(0, 0, 255, 0.5)"}`, `{"hex":"#0000ff80","rgb":"rgb(0 0 255 / 0.5)","hsl":"hsl(240 100% 50% / 0.5)","oklch":"oklch(45.2% 0.3132 264.05 / 0.5)","in_gamut":true}`},
		{"out of gamut", `{"operation":"convert","color":"oklch(0.7 0.4 150)"}`, `{"hex":"#00d600","rgb":"rgb(0 214 0)","hsl":"hsl(120 100% 41.93%)","oklch":"oklch(70% 0.4 150)","in_gamut":false}`},
	})
	runFaults(t, tools, "color", map[string]string{
		`{"operation":"convert","color":"red"}`: "color is not a CSS colour this tool reads: #rgb, #rrggbb, #rrggbbaa, rgb(), hsl() or oklch()",
	})
	tools.Refused(t, "color", `{"operation":"convert"}`)
}

// SemVer 2.0.0 §11's precedence and the range forms of Masterminds'
// README.
func TestSemver(t *testing.T) {
	tools := load(t)
	runVectors(t, tools, "semver", []vector{
		{"pre-release first", `{"operation":"compare","a":"1.0.0-alpha.beta","b":"1.0.0-beta"}`, `{"comparison":-1,"a":"1.0.0-alpha.beta","b":"1.0.0-beta"}`},
		{"numeric identifiers", `{"operation":"compare","a":"1.0.0-beta.11","b":"1.0.0-beta.2"}`, `{"comparison":1,"a":"1.0.0-beta.11","b":"1.0.0-beta.2"}`},
		{"metadata ignored", `{"operation":"compare","a":"v1.0+build.1","b":"1.0.0+build.2"}`, `{"comparison":0,"a":"1.0.0+build.1","b":"1.0.0+build.2"}`},
		{"caret", `{"operation":"match","version":"1.9.9","range":"^1.2.3"}`, `{"matches":true,"version":"1.9.9"}`},
		{"or", `{"operation":"match","version":"2.5.0","range":">= 1.0, < 2 || >= 3"}`, `{"matches":false,"version":"2.5.0"}`},
		{"pre-release excluded", `{"operation":"match","version":"1.2.4-beta.1","range":">=1.2.0"}`, `{"matches":false,"version":"1.2.4-beta.1"}`},
		{"pre-release included", `{"operation":"match","version":"1.2.4-beta.1","range":">=1.2.0","include_prerelease":true}`, `{"matches":true,"version":"1.2.4-beta.1"}`},
	})
	runFaults(t, tools, "semver", map[string]string{
		`{"operation":"compare","a":"v1.2","b":"1.2.0","strict":true}`: "a is not a semantic version",
		`{"operation":"compare","a":"1.2.0","b":"1.2.3.4"}`:            "b is not a semantic version",
		`{"operation":"match","version":"1.2.3","range":">>1"}`:        "range is not a version range",
	})
	tools.Refused(t, "semver", `{"operation":"compare","a":"1.0.0"}`)
	tools.Refused(t, "semver", `{"operation":"compare","a":"1.0.0","b":"1.0.0","include_prerelease":true}`)
}
