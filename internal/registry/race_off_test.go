//go:build !race

package registry_test

// raceEnabled: the race detector is on (a cold compile of a Go module then
// takes minutes).
const raceEnabled = false
