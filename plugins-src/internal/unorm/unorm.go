// Package unorm puts Unicode normalisation (UAX #15) behind the four form
// names, with golang.org/x/text/unicode/norm doing the work: its tables are
// static data, so nothing is built when a module starts.
package unorm

import (
	"errors"

	"golang.org/x/text/unicode/norm"
)

// ErrForm is returned for a form name that is not nfc, nfd, nfkc or nfkd.
var ErrForm = errors.New("unorm: unknown form")

var forms = map[string]norm.Form{"nfc": norm.NFC, "nfd": norm.NFD, "nfkc": norm.NFKC, "nfkd": norm.NFKD}

// Normalize returns text in the named form.
func Normalize(text, form string) (string, error) {
	f, ok := forms[form]
	if !ok {
		return "", ErrForm
	}
	return f.String(text), nil
}

// IsNormal reports whether text is already in the named form.
func IsNormal(text, form string) (bool, error) {
	f, ok := forms[form]
	if !ok {
		return false, ErrForm
	}
	return f.IsNormalString(text), nil
}

// Version is the Unicode version of the tables.
const Version = norm.Version
