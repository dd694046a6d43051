package uuidinfo

import (
	"errors"
	"testing"
)

// RFC 9562 Appendix A's test vectors: A.1 (v1), A.2 (v3), A.3 (v4), A.4
// (v5), A.5 (v6), A.6 (v7), B.1 (v8); the Nil and Max UUIDs of §5.9–5.10.
// The v1, v6 and v7 vectors hold 2022-02-22 14:22:22 at -05:00.
func TestInspect(t *testing.T) {
	tests := []struct {
		in   string
		want Info
	}{
		{"C232AB00-9414-11EC-B3C8-9F6BDECED846", Info{"c232ab00-9414-11ec-b3c8-9f6bdeced846", "urn:uuid:c232ab00-9414-11ec-b3c8-9f6bdeced846", 1, "rfc9562", "2022-02-22T19:22:22Z", ""}},
		{"5df41881-3aed-3515-88a7-2f4a814cf09e", Info{"5df41881-3aed-3515-88a7-2f4a814cf09e", "urn:uuid:5df41881-3aed-3515-88a7-2f4a814cf09e", 3, "rfc9562", "", ""}},
		{"919108f7-52d1-4320-9bac-f847db4148a8", Info{"919108f7-52d1-4320-9bac-f847db4148a8", "urn:uuid:919108f7-52d1-4320-9bac-f847db4148a8", 4, "rfc9562", "", ""}},
		{"{2ed6657d-e927-568b-95e1-2665a8aea6a2}", Info{"2ed6657d-e927-568b-95e1-2665a8aea6a2", "urn:uuid:2ed6657d-e927-568b-95e1-2665a8aea6a2", 5, "rfc9562", "", ""}},
		{"urn:uuid:1EC9414C-232A-6B00-B3C8-9F6BDECED846", Info{"1ec9414c-232a-6b00-b3c8-9f6bdeced846", "urn:uuid:1ec9414c-232a-6b00-b3c8-9f6bdeced846", 6, "rfc9562", "2022-02-22T19:22:22Z", ""}},
		{"017F22E279B07CC398C4DC0C0C07398F", Info{"017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f", 7, "rfc9562", "2022-02-22T19:22:22Z", ""}},
		{"2489E9AD-2EE2-8E00-8EC9-32D5F69181C0", Info{"2489e9ad-2ee2-8e00-8ec9-32d5f69181c0", "urn:uuid:2489e9ad-2ee2-8e00-8ec9-32d5f69181c0", 8, "rfc9562", "", ""}},
		{"00000000-0000-0000-0000-000000000000", Info{"00000000-0000-0000-0000-000000000000", "urn:uuid:00000000-0000-0000-0000-000000000000", 0, "ncs", "", "nil"}},
		{"FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", Info{"ffffffff-ffff-ffff-ffff-ffffffffffff", "urn:uuid:ffffffff-ffff-ffff-ffff-ffffffffffff", 15, "future", "", "max"}},
		{"6ba7b810-9dad-11d1-c0b4-00c04fd430c8", Info{"6ba7b810-9dad-11d1-c0b4-00c04fd430c8", "urn:uuid:6ba7b810-9dad-11d1-c0b4-00c04fd430c8", 1, "microsoft", "", ""}},
	}
	for _, tt := range tests {
		if got, err := Inspect(tt.in); err != nil || got != tt.want {
			t.Errorf("Inspect(%q) =\n%+v, %v, want\n%+v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "c232ab00-9414-11ec-b3c8-9f6bdeced84", "c232ab00-9414-11ec-b3c8-9f6bdeced84g", "c232ab00_9414_11ec_b3c8_9f6bdeced846", "urn:uuix:c232ab00-9414-11ec-b3c8-9f6bdeced846"} {
		if _, err := Inspect(bad); !errors.Is(err, ErrUUID) {
			t.Errorf("Inspect(%q): %v", bad, err)
		}
	}
}

// RFC 9562 A.2 and A.4: the DNS namespace and www.example.com.
func TestNameBased(t *testing.T) {
	tests := []struct {
		version  int
		ns, name string
		want     string
	}{
		{3, "dns", "www.example.com", "5df41881-3aed-3515-88a7-2f4a814cf09e"},
		{5, "dns", "www.example.com", "2ed6657d-e927-568b-95e1-2665a8aea6a2"},
		{5, "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.example.com", "2ed6657d-e927-568b-95e1-2665a8aea6a2"},
		// Python's uuid.uuid5(uuid.NAMESPACE_URL, "https://example.com/").
		{5, "url", "https://example.com/", "dd2c1780-811a-5296-81c5-178a0ef488bc"},
		{3, "url", "https://example.com/", "b9dcdff8-af4a-365d-8043-0f8361942709"},
	}
	for _, tt := range tests {
		if got, err := NameBased(tt.version, tt.ns, tt.name); err != nil || got != tt.want {
			t.Errorf("NameBased(%d, %s, %q) = %s, %v, want %s", tt.version, tt.ns, tt.name, got, err, tt.want)
		}
	}
	if _, err := NameBased(5, "DNS", "x"); !errors.Is(err, ErrNamespace) {
		t.Errorf("DNS: %v", err)
	}
	if _, err := NameBased(4, "dns", "x"); !errors.Is(err, ErrVersion) {
		t.Errorf("v4: %v", err)
	}
}
