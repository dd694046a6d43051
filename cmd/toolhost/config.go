package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"

	"github.com/pelletier/go-toml/v2"
)

// maxConfigBytes bounds the config file read.
const maxConfigBytes = 1 << 20

// readConfig reads the TOML config file at path: one key per setting,
// named as its flag (`cache-dir = "/var/cache/toolhost"`). A key that is
// no setting is refused, naming it, so that a typo is not silently a
// default. Each command takes the keys of its own settings.
func readConfig(path string) (map[string]any, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close() //nolint:errcheck // read-only file: nothing to lose
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("config %s: larger than %d bytes", path, maxConfigBytes)
	}
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, fmt.Errorf("config %s:%d:%d: %v", path, row, col, de)
		}
		return nil, fmt.Errorf("config %s: %v", path, err)
	}
	for _, key := range slices.Sorted(mapKeys(doc)) {
		if _, ok := lookupSetting(key); !ok || key == configSetting {
			return nil, fmt.Errorf("config %s: unknown key %q (the keys are the settings' flag names: toolhost help)", path, key)
		}
	}
	return doc, nil
}

// configValues turns a config value into the texts the setting's flag
// parses: one for a scalar, one per element of an array for a list.
func configValues(s setting, v any) ([]string, error) {
	if arr, ok := v.([]any); ok {
		if !s.List {
			return nil, errors.New("takes one value, not an array")
		}
		var out []string
		for _, e := range arr {
			text, err := scalarText(e)
			if err != nil {
				return nil, err
			}
			out = append(out, text)
		}
		return out, nil
	}
	text, err := scalarText(v)
	if err != nil {
		return nil, err
	}
	return []string{text}, nil
}

// scalarText is a TOML scalar as a flag would be given it.
func scalarText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	return "", errNotScalar
}
