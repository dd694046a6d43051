package wasmtool

import (
	"errors"

	"github.com/toolhost/toolhost/host"
)

// moduleLimit reports the name of the structure limit host refused the
// module for (host.LimitError.Limit), when err is such a refusal.
func moduleLimit(err error) (string, bool) {
	var le *host.LimitError
	if errors.As(err, &le) {
		return le.Limit, true
	}
	return "", false
}
