//go:build race

package server_test

// raceRSSExtra is what the race detector's shadow memory adds to the
// bounds on the process's resident memory.
const raceRSSExtra = 384 << 20
