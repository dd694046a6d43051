package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// SigningKeyFile is the file in the data folder holding the key of signed
// download URLs: 32 random bytes, mode 0600, made once.
const SigningKeyFile = "signing.key"

// signingKey reads the signing key at path, making it the first time:
// 32 random bytes, readable by the owner alone. A key shorter than 32
// bytes is refused rather than used.
func signingKey(path string) ([]byte, error) {
	key, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("making the signing key: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("creating the signing key: %w", err)
		}
		_, err = f.Write(key)
		if err == nil {
			err = f.Sync()
		}
		err = errors.Join(err, f.Close())
		if err != nil {
			_ = os.Remove(path)
			return nil, fmt.Errorf("writing the signing key: %w", err)
		}
		return key, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the signing key: %w", err)
	}
	if len(key) < 32 {
		return nil, fmt.Errorf("the signing key %s is %d bytes, fewer than 32", path, len(key))
	}
	return key, nil
}

// ownerKey derives the key of anonymous job owners from the signing key,
// so that anonymous callers keep their jobs across a restart.
func ownerKey(signing []byte) []byte {
	m := hmac.New(sha256.New, signing)
	m.Write([]byte("github.com/toolhost/toolhost/jobs/anonymous-owner/v1"))
	return m.Sum(nil)
}

// runtimeID is an opaque identifier of this process for diagnostics: random,
// so that it says nothing about the host.
func runtimeID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("server: no randomness: %v", err))
	}
	return hex.EncodeToString(b[:])
}
