// Package scaleout holds the three-replica test of issue 18 (its tests
// only): three `toolhost serve` processes built from this tree, one
// PostgreSQL (--store), one Redis (--redis) and one shared --files-dir on
// loopback, driven over HTTP as a load balancer's clients would. It runs
// when TOOLHOST_TEST_POSTGRES and TOOLHOST_TEST_REDIS are set (.ci/run
// sets both), skips with a message otherwise, and fails under CI=true
// without them. docs/scale-out.md describes the topology it checks.
package scaleout
