//go:build !toolhost_count

package wire

// The counting hooks of the default build: empty, so the compiler inlines
// them to nothing. Builds with the toolhost_count tag record every call
// instead (count_testing.go).

func countDecode([]byte) {}

func countEncode([]byte, int) {}
