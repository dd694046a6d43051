package netprobe

import (
	"errors"
	"sync"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// The bulk checks (ADR-027: "bulk header or TLS checks"): tls_check_bulk
// and http_headers_bulk run tls_check's or http_headers' probe on up to
// MaxBulk targets at once, inside the one engine window. Each target
// counts against its own per-target throttle (the guard reads "hosts" and
// "urls"), and each gets its own entry: the result, or the tool error
// that target met (a refused address, a failed handshake…). Only the
// engine window's end fails the whole run.

// MaxBulk is the most targets of one bulk check.
const MaxBulk = 5

// opBulk is both bulk checks' operation.
const opBulk = "check"

type tlsBulkInput struct {
	Operation string   `json:"operation" doc:"check: run tls_check on each host at once."`
	Hosts     []string `json:"hosts" minItems:"1" maxItems:"5" doc:"1 to 5 distinct hosts: public DNS names or IP addresses, each as tls_check's host."`
	Port      int      `json:"port,omitempty" minimum:"1" maximum:"65535" default:"443" doc:"The TCP port of every host's TLS server."`
}

func (in *tlsBulkInput) SelectedOperation() string { return in.Operation }

type httpBulkInput struct {
	Operation string   `json:"operation" doc:"check: run http_headers on each URL at once."`
	URLs      []string `json:"urls" minItems:"1" maxItems:"5" doc:"1 to 5 distinct http or https URLs, each as http_headers' url."`
}

func (in *httpBulkInput) SelectedOperation() string { return in.Operation }

// bulkError is a target's own failure.
type bulkError struct {
	Code    string `json:"code" doc:"The tool error code the target met, such as invalid_parameters for a refused address."`
	Message string `json:"message" doc:"What went wrong; it never quotes the address."`
}

type tlsBulkEntry struct {
	Host   string     `json:"host" doc:"The host as given."`
	OK     bool       `json:"ok" doc:"Whether the check ran; false with error set."`
	Result *tlsOutput `json:"result,omitempty" doc:"tls_check's result for the host."`
	Error  *bulkError `json:"error,omitempty" doc:"The host's failure."`
}

type httpBulkEntry struct {
	URL    string      `json:"url" doc:"The URL as given."`
	OK     bool        `json:"ok" doc:"Whether the check ran; false with error set."`
	Result *httpOutput `json:"result,omitempty" doc:"http_headers' result for the URL."`
	Error  *bulkError  `json:"error,omitempty" doc:"The URL's failure."`
}

type tlsBulkOutput struct {
	Results []tlsBulkEntry `json:"results" maxItems:"5" doc:"One entry per host, in the order given."`
}

type httpBulkOutput struct {
	Results []httpBulkEntry `json:"results" maxItems:"5" doc:"One entry per URL, in the order given."`
}

// bulk runs probe on each target at once. A target's tool error is its
// entry's; the engine window's end (execution_limit) fails the run.
func bulk[Out any](pc *probeContext, n int, probe func(i int) (Out, error), entry func(i int, out *Out, e *bulkError)) error {
	if n < 1 || n > MaxBulk {
		return native.Refuse(toolerr.InvalidParameters, "1 to %d targets a run", MaxBulk)
	}
	errs := make([]error, n)
	outs := make([]Out, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = probe(i)
		}()
	}
	wg.Wait()
	if pc.ctx.Err() != nil {
		return windowOut(pc)
	}
	for i, err := range errs {
		var te *toolerr.Error
		switch {
		case err == nil:
			entry(i, &outs[i], nil)
		case errors.As(err, &te) && te.Code != toolerr.ExecutionLimit:
			entry(i, nil, &bulkError{Code: string(te.Code), Message: te.Message})
		default:
			return err
		}
	}
	return nil
}

// distinct refuses a repeated target.
func distinct(field string, targets []string) error {
	for i, t := range targets {
		for _, u := range targets[:i] {
			if t == u {
				return native.Refuse(toolerr.InvalidParameters, "%s[%d]: the target is repeated", field, i)
			}
		}
	}
	return nil
}

func tlsCheckBulk(pc *probeContext, in *tlsBulkInput) (tlsBulkOutput, error) {
	if err := distinct("hosts", in.Hosts); err != nil {
		return tlsBulkOutput{}, err
	}
	out := tlsBulkOutput{Results: make([]tlsBulkEntry, len(in.Hosts))}
	err := bulk(pc, len(in.Hosts), func(i int) (tlsOutput, error) {
		return tlsCheck(pc, &tlsInput{Operation: opTLS, Host: in.Hosts[i], Port: in.Port})
	}, func(i int, o *tlsOutput, e *bulkError) {
		out.Results[i] = tlsBulkEntry{Host: in.Hosts[i], OK: e == nil, Result: o, Error: e}
	})
	return out, err
}

func httpHeadersBulk(pc *probeContext, in *httpBulkInput) (httpBulkOutput, error) {
	if err := distinct("urls", in.URLs); err != nil {
		return httpBulkOutput{}, err
	}
	out := httpBulkOutput{Results: make([]httpBulkEntry, len(in.URLs))}
	err := bulk(pc, len(in.URLs), func(i int) (httpOutput, error) {
		return httpHeaders(pc, &httpInput{Operation: opHTTP, URL: in.URLs[i]})
	}, func(i int, o *httpOutput, e *bulkError) {
		out.Results[i] = httpBulkEntry{URL: in.URLs[i], OK: e == nil, Result: o, Error: e}
	})
	return out, err
}

var tlsBulkTexts = map[string]guest.Text{
	"en": {Name: "Bulk TLS check", Description: "Run the TLS check on up to 5 public hosts at once and report each host's certificates or failure."},
	"it": {Name: "Controllo TLS multiplo", Description: "Esegue il controllo TLS su un massimo di 5 host pubblici insieme e riporta per ciascuno i certificati o l'errore."},
	"fr": {Name: "Vérification TLS groupée", Description: "Lance la vérification TLS sur jusqu'à 5 hôtes publics à la fois et indique pour chacun ses certificats ou son échec."},
	"es": {Name: "Comprobación TLS múltiple", Description: "Ejecuta la comprobación TLS en hasta 5 hosts públicos a la vez e informa de los certificados o el fallo de cada uno."},
}

var httpBulkTexts = map[string]guest.Text{
	"en": {Name: "Bulk HTTP headers", Description: "Fetch the response headers of up to 5 public http or https URLs at once and report each URL's headers or failure."},
	"it": {Name: "Intestazioni HTTP multiple", Description: "Legge le intestazioni di risposta di un massimo di 5 URL http o https pubblici insieme e riporta per ciascuno le intestazioni o l'errore."},
	"fr": {Name: "En-têtes HTTP groupés", Description: "Récupère les en-têtes de réponse de jusqu'à 5 URL http ou https publiques à la fois et indique pour chacune ses en-têtes ou son échec."},
	"es": {Name: "Cabeceras HTTP múltiples", Description: "Obtiene las cabeceras de respuesta de hasta 5 URL http o https públicas a la vez e informa de las cabeceras o el fallo de cada una."},
}
