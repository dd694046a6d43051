package netprobe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// httpInput is the input of http_headers.
type httpInput struct {
	Operation string `json:"operation" doc:"fetch: request the URL with HEAD (GET when HEAD is refused) and report the response headers."`
	URL       string `json:"url" minLength:"8" maxLength:"2048" pattern:"^[Hh][Tt][Tt][Pp][Ss]?://" doc:"The http or https URL. Its host must resolve to a public address; private, loopback, link-local, CGNAT, multicast, reserved and cloud metadata addresses are refused."`
}

func (in *httpInput) SelectedOperation() string { return in.Operation }

// httpOutput is the result of http_headers.
type httpOutput struct {
	URL        string   `json:"url" doc:"The URL as requested."`
	Address    string   `json:"address" doc:"The IP address that was connected to."`
	Method     string   `json:"method" enum:"HEAD,GET" doc:"HEAD, or GET when the server refused HEAD (405 or 501); the body of a GET is never read."`
	Status     int      `json:"status" minimum:"100" maximum:"999" doc:"The response status code."`
	Protocol   string   `json:"protocol" doc:"The response protocol, e.g. HTTP/1.1 or HTTP/2.0."`
	Location   string   `json:"location" doc:"The Location header of a redirect (not followed); empty when there is none."`
	Headers    []header `json:"headers" maxItems:"100" doc:"The response headers sorted by name, one entry per value, at most 100."`
	Truncated  bool     `json:"truncated" doc:"Whether header values were left out (more than 100) or cut (over 1024 bytes)."`
	TLSVersion string   `json:"tls_version" doc:"The TLS version of an https request; empty for http."`
}

type header struct {
	Name  string `json:"name" doc:"The header name in canonical form."`
	Value string `json:"value" doc:"The value, at most 1024 bytes."`
}

// httpTimeout bounds one request: connect, TLS handshake and response
// headers. Two requests (HEAD, then GET) fit the 8 s window with the
// window's own deadline as the final bound.
const httpTimeout = 3500 * time.Millisecond

// httpHeaders requests the URL from the checked address with HEAD, and
// with GET when HEAD is refused; it never follows a redirect, reads no
// body and at most MaxHeaderBytes of headers, uses no proxy, and sends
// the URL's host as the Host header and SNI.
func httpHeaders(pc *probeContext, in *httpInput) (httpOutput, error) {
	u, err := url.Parse(in.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Opaque != "" {
		return httpOutput{}, native.Refuse(toolerr.InvalidParameters, "url: not an http or https URL with a host and no user information")
	}
	port := 80
	if u.Scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return httpOutput{}, native.Refuse(toolerr.InvalidParameters, "url: the port is not a TCP port")
		}
		port = n
	}
	t, err := pc.resolve(u.Hostname())
	if err != nil {
		return httpOutput{}, err
	}
	dialer := pc.dialer(httpTimeout)
	transport := &http.Transport{
		Proxy: nil,
		// Every connection goes to the checked address, whatever the
		// address the transport asks for; the Control hook checks it.
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, "tcp", net.JoinHostPort(t.addr.String(), strconv.Itoa(port)))
		},
		TLSClientConfig:        &tls.Config{},
		TLSHandshakeTimeout:    httpTimeout,
		ResponseHeaderTimeout:  httpTimeout,
		MaxResponseHeaderBytes: MaxHeaderBytes,
		DisableKeepAlives:      true,
		DisableCompression:     true,
		ForceAttemptHTTP2:      true,
	}
	defer transport.CloseIdleConnections()
	client := &http.Client{
		Transport:     transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	out := httpOutput{URL: in.URL, Address: t.addr.String(), Headers: []header{}}
	for _, method := range []string{http.MethodHead, http.MethodGet} {
		if err := pc.native.Checkpoint(); err != nil {
			return httpOutput{}, err
		}
		resp, err := request(pc, client, method, u)
		if err != nil {
			return httpOutput{}, err
		}
		resp.Body.Close() //nolint:errcheck // the status is the answer: the body goes unread
		if method == http.MethodHead && (resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotImplemented) {
			continue
		}
		out.Method, out.Status, out.Protocol = method, resp.StatusCode, resp.Proto
		if resp.TLS != nil {
			out.TLSVersion = tls.VersionName(resp.TLS.Version)
		}
		out.Location = native.Clip(resp.Header.Get("Location"), MaxValueBytes)
		out.Headers, out.Truncated = headers(resp.Header)
		break
	}
	return out, nil
}

// request sends one request within httpTimeout and the window.
func request(pc *probeContext, client *http.Client, method string, u *url.URL) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(pc.ctx, httpTimeout)
	req, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		cancel()
		return nil, native.Refuse(toolerr.InvalidParameters, "url: the request cannot be built")
	}
	req.Header.Set("User-Agent", "toolhost-http-headers/1.0")
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		if pc.ctx.Err() != nil {
			return nil, windowOut(pc)
		}
		return nil, native.Refuse(toolerr.InvalidParameters, "the request failed: %s", requestReason(err))
	}
	// The body is closed by the caller, before the context is cancelled.
	resp.Body = bodyCloser{resp.Body, cancel}
	return resp, nil
}

type bodyCloser struct {
	body   interface{ Close() error }
	cancel context.CancelFunc
}

func (b bodyCloser) Read([]byte) (int, error) {
	return 0, errors.New("netprobe: the body is never read")
}
func (b bodyCloser) Close() error {
	err := b.body.Close()
	b.cancel()
	return err
}

// requestReason is a short reason for a failed request, without the URL.
func requestReason(err error) string {
	var certErr *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &certErr), errors.As(err, &unknown), errors.As(err, &hostErr), errors.As(err, &invalid):
		return "the server's certificate does not verify (tls_check reports why)"
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer in time"
	case errors.Is(err, errNotChecked):
		return "the address is refused"
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return "no answer in time"
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return "the connection was refused"
	}
	return "the connection failed or the response was not HTTP"
}

// headers returns the header values sorted by name, at most MaxHeaders,
// each cut to MaxValueBytes, and whether anything was left out or cut.
func headers(h http.Header) ([]header, bool) {
	out := []header{}
	truncated := false
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range h {
			if !yield(k) {
				return
			}
		}
	}) {
		for _, v := range h[name] {
			if len(out) == MaxHeaders {
				return out, true
			}
			c := native.Clip(v, MaxValueBytes)
			truncated = truncated || c != v
			out = append(out, header{Name: native.Clip(name, 256), Value: c})
		}
	}
	return out, truncated
}
