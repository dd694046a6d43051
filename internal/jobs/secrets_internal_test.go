package jobs

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Processes sharing a files folder (replicas on one volume) that make the
// secrets key at once all end with the one key the folder holds, whole,
// 0600, and no temporary file is left.
func TestSecretsKeyCreatedOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, secretsKeyFile)
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := createSecretsKey(path)
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	onDisk, err := os.ReadFile(path)
	if err != nil || len(onDisk) != 32 {
		t.Fatalf("the key file: %d bytes, %v", len(onDisk), err)
	}
	for i, k := range keys {
		if !bytes.Equal(k, onDisk) {
			t.Errorf("creator %d holds another key than the file's", i)
		}
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the key file's mode: %v, %v", st, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
