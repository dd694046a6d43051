package jobs

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Secrets of a job's input (issue 16, item 2): the members a submission
// names in Submission.Secrets (its tool's schema marks them writeOnly: a
// PDF's passwords) are taken out of the input before it is stored, so the
// jobs table, job documents, events and logs never hold them. They are
// sealed with AES-256-GCM under the data folder's secrets key into the
// job's folder (secretsFile, 0600), opened and merged back into the
// input only for the handler's run. The sealed file stays while the job
// may run again — a Retry of a failed or cancelled job, a Retryable job
// re-run after its process or replica died — so that every run gets the
// input as submitted, and goes once the job succeeds (no run follows) or
// with the job's folder when the job expires. The key is secretsKeyFile in
// the jobs folder, 32 random bytes created 0600 on first use; the sealed
// file is bound to its job's id (the AEAD's additional data).

// secretsKeyFile is the key's file in the jobs folder; secretsFile the
// sealed secrets' file in a job's folder.
const (
	secretsKeyFile = ".secrets-key"
	secretsFile    = "secrets"
)

// splitSecrets takes the members names of the input object out of it: the
// input without them, and the members as a JSON object (nil when none was
// there).
func splitSecrets(input []byte, names []string) (rest, secrets []byte, err error) {
	if len(names) == 0 {
		return input, nil, nil
	}
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, nil, fmt.Errorf("%w: the input is not a JSON object", ErrInvalid)
	}
	sec := map[string]json.RawMessage{}
	for _, n := range names {
		if v, ok := m[n]; ok {
			sec[n] = v
			delete(m, n)
		}
	}
	if len(sec) == 0 {
		return input, nil, nil
	}
	if rest, err = json.Marshal(m); err != nil {
		return nil, nil, err
	}
	if secrets, err = json.Marshal(sec); err != nil {
		return nil, nil, err
	}
	return rest, secrets, nil
}

// mergeSecrets returns input with the members of secrets (a JSON object)
// put back.
func mergeSecrets(input, secrets []byte) ([]byte, error) {
	var m, sec map[string]json.RawMessage
	if err := json.Unmarshal(input, &m); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(secrets, &sec); err != nil {
		return nil, err
	}
	for k, v := range sec {
		m[k] = v
	}
	return json.Marshal(m)
}

// secretsAEAD returns the AES-256-GCM of the data folder's secrets key,
// creating the key (0600) on first use.
func (s *Service) secretsAEAD() (cipher.AEAD, error) {
	s.secretsMu.Lock()
	defer s.secretsMu.Unlock()
	if s.secretsAEADv != nil {
		return s.secretsAEADv, nil
	}
	path := filepath.Join(s.root, secretsKeyFile)
	key, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key, err = createSecretsKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("the secrets key: %w", err)
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("the secrets key %s has %d bytes, not 32", path, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	s.secretsAEADv = aead
	return aead, nil
}

// sealSecrets writes secrets sealed into job id's folder. The job id is
// the additional data: a sealed file moved to another job does not open.
func (s *Service) sealSecrets(id string, secrets []byte) error {
	aead, err := s.secretsAEAD()
	if err != nil {
		return err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	sealed := aead.Seal(nonce, nonce, secrets, []byte(id))
	clear(secrets)
	f, err := os.OpenFile(filepath.Join(s.jobDir(id), secretsFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("writing job %s's secrets: %w", id, err)
	}
	_, err = f.Write(sealed)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing job %s's secrets: %w", id, err)
	}
	return nil
}

// openSecrets opens job id's sealed secrets: nil when there are none
// (never any, or gone with the job's success).
func (s *Service) openSecrets(id string) ([]byte, error) {
	path := filepath.Join(s.jobDir(id), secretsFile)
	sealed, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading job %s's secrets: %w", id, err)
	}
	aead, err := s.secretsAEAD()
	if err != nil {
		return nil, err
	}
	n := aead.NonceSize()
	if len(sealed) < n {
		return nil, fmt.Errorf("job %s's secrets are truncated", id)
	}
	plain, err := aead.Open(nil, sealed[:n], sealed[n:], []byte(id))
	if err != nil {
		return nil, fmt.Errorf("opening job %s's secrets: %w", id, err)
	}
	return plain, nil
}

// createSecretsKey makes the key file at path with 32 random bytes, 0600,
// and returns the key the file holds. The file appears whole or not at
// all (written aside, then linked into place), and when another process
// sharing the folder (a replica on the same files volume) linked its key
// first, that key is the one returned, so that every process seals and
// opens with one key.
func createSecretsKey(path string) ([]byte, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), secretsKeyFile+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("creating: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) //nolint:errcheck // the key lives on at path, linked; a leftover only takes room
	_, err = f.Write(key)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("writing: %w", err)
	}
	if err := os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
		return os.ReadFile(path)
	} else if err != nil {
		return nil, fmt.Errorf("linking into place: %w", err)
	}
	return key, nil
}

// wipeSecrets removes job id's sealed secrets, if any.
func (s *Service) wipeSecrets(id string) {
	if err := os.Remove(filepath.Join(s.jobDir(id), secretsFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.log.Warn("jobs: removing a job's secrets", "job", id, "error", err)
	}
}
