package store_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/testkit/storetest"
)

// TestSharedKey: one key per name, made once, the same for every process
// of the store, even when they ask together; a seed is used only the first
// time.
func TestSharedKey(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		var stores []*store.Store
		for range 3 {
			s, err := store.Open(ctx, b.Target)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			stores = append(stores, s)
		}
		keys := make([][]byte, len(stores))
		var wg sync.WaitGroup
		errs := make([]error, len(stores))
		for i, s := range stores {
			wg.Go(func() { keys[i], errs[i] = s.SharedKey(ctx, store.SigningKeyName, nil) })
		}
		wg.Wait()
		for i := range stores {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			if len(keys[i]) != store.MinSharedKeyBytes || !bytes.Equal(keys[i], keys[0]) {
				t.Fatalf("process %d has key %x, process 0 %x", i, keys[i], keys[0])
			}
		}
		seeded := bytes.Repeat([]byte{7}, 40)
		k, err := stores[0].SharedKey(ctx, "other", func() ([]byte, error) { return seeded, nil })
		if err != nil || !bytes.Equal(k, seeded) {
			t.Fatalf("seeded key %x, %v", k, err)
		}
		k, err = stores[1].SharedKey(ctx, "other", func() ([]byte, error) { return nil, errors.New("not asked again") })
		if err != nil || !bytes.Equal(k, seeded) {
			t.Fatalf("second read %x, %v", k, err)
		}
		if _, err := stores[0].SharedKey(ctx, "short", func() ([]byte, error) { return []byte("short"), nil }); err == nil {
			t.Fatal("a short key was stored")
		}
	})
}
