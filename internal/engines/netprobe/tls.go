package netprobe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"time"

	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// tlsInput is the input of tls_check.
type tlsInput struct {
	Operation string `json:"operation" doc:"check: complete a TLS handshake and report the server's certificates."`
	Host      string `json:"host" minLength:"1" maxLength:"255" pattern:"^[0-9A-Za-z._:\\[\\]-]+$" doc:"The host: a public DNS name (sent as SNI and verified against the certificate) or IP address. Addresses in private, loopback, link-local, CGNAT, multicast, reserved or cloud metadata ranges are refused."`
	Port      int    `json:"port,omitempty" minimum:"1" maximum:"65535" default:"443" doc:"The TCP port of the TLS server."`
}

func (in *tlsInput) SelectedOperation() string { return in.Operation }

// tlsOutput is the result of tls_check.
type tlsOutput struct {
	Host        string        `json:"host" doc:"The host as given."`
	Address     string        `json:"address" doc:"The IP address that was connected to."`
	Port        int           `json:"port" minimum:"1" maximum:"65535" doc:"The port."`
	ServerName  string        `json:"server_name" doc:"The SNI name sent; empty for an IP address."`
	Protocol    string        `json:"protocol" doc:"The negotiated protocol version, e.g. TLS 1.3."`
	CipherSuite string        `json:"cipher_suite" doc:"The negotiated cipher suite, e.g. TLS_AES_128_GCM_SHA256."`
	ALPN        string        `json:"alpn" doc:"The negotiated application protocol (h2 or http/1.1 offered); empty when none."`
	Verified    bool          `json:"verified" doc:"Whether the chain verifies against the system roots for the host name (or IP address) at the time of the check."`
	Findings    []string      `json:"findings" doc:"What a reader should know: the verification failure, an expired or not yet valid certificate, one expiring within 30 days."`
	Chain       []certificate `json:"chain" maxItems:"10" doc:"The certificates the server sent, leaf first, at most 10."`
}

type certificate struct {
	Subject      string   `json:"subject" doc:"The subject's distinguished name."`
	Issuer       string   `json:"issuer" doc:"The issuer's distinguished name."`
	SerialNumber string   `json:"serial_number" doc:"The serial number in decimal."`
	NotBefore    string   `json:"not_before" doc:"The start of validity, RFC 3339 in UTC."`
	NotAfter     string   `json:"not_after" doc:"The end of validity, RFC 3339 in UTC."`
	DaysToExpiry int      `json:"days_to_expiry" doc:"Whole days from the check to not_after; negative once expired."`
	DNSNames     []string `json:"dns_names" maxItems:"20" doc:"The subject alternative DNS names, at most 20."`
	IsCA         bool     `json:"is_ca" doc:"Whether the certificate is a CA certificate."`
}

// tlsTimeout bounds the connect and the handshake.
const tlsTimeout = 5 * time.Second

// expiryWarningDays is when tls_check starts to warn of expiry.
const expiryWarningDays = 30

// tlsCheck handshakes with the checked address, sending the host name as
// SNI, and verifies the chain itself so that a failure is a finding, not
// an error.
func tlsCheck(pc *probeContext, in *tlsInput) (tlsOutput, error) {
	port := in.Port
	if port == 0 {
		port = 443
	}
	t, err := pc.resolve(in.Host)
	if err != nil {
		return tlsOutput{}, err
	}
	if err := pc.native.Checkpoint(); err != nil {
		return tlsOutput{}, err
	}
	ctx, cancel := context.WithTimeout(pc.ctx, tlsTimeout)
	defer cancel()
	raw, err := pc.dial(ctx, t, port, tlsTimeout)
	if err != nil {
		if pc.ctx.Err() != nil {
			return tlsOutput{}, windowOut(pc)
		}
		return tlsOutput{}, native.Refuse(toolerr.InvalidParameters, "the TLS server could not be reached: the port is %s", connState(err))
	}
	defer raw.Close() //nolint:errcheck // the handshake is the probe: closing loses nothing
	serverName := ""
	if _, err := netip.ParseAddr(t.host); err != nil {
		serverName = t.host
	}
	conn := tls.Client(raw, &tls.Config{
		ServerName: serverName,
		// The chain is verified below, so that a failure is reported as
		// a finding with the rest of the handshake.
		InsecureSkipVerify: true,
		NextProtos:         []string{"h2", "http/1.1"},
	})
	if err := conn.HandshakeContext(ctx); err != nil {
		if pc.ctx.Err() != nil {
			return tlsOutput{}, windowOut(pc)
		}
		return tlsOutput{}, native.Refuse(toolerr.InvalidParameters, "the TLS handshake failed: %s", handshakeReason(err))
	}
	defer conn.Close() //nolint:errcheck // the handshake is the probe: closing loses nothing
	st := conn.ConnectionState()
	now := time.Now()
	out := tlsOutput{
		Host: in.Host, Address: t.addr.String(), Port: port, ServerName: serverName,
		Protocol: tls.VersionName(st.Version), CipherSuite: tls.CipherSuiteName(st.CipherSuite),
		ALPN: st.NegotiatedProtocol, Findings: []string{}, Chain: []certificate{},
	}
	if len(st.PeerCertificates) == 0 {
		out.Findings = append(out.Findings, "the server sent no certificate")
		return out, nil
	}
	inter := x509.NewCertPool()
	for _, c := range st.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	verifyName := serverName
	if verifyName == "" {
		verifyName = t.addr.String()
	}
	if _, err := st.PeerCertificates[0].Verify(x509.VerifyOptions{DNSName: verifyName, Intermediates: inter, CurrentTime: now}); err != nil {
		out.Findings = append(out.Findings, native.Clip("verification failed: "+err.Error(), MaxValueBytes))
	} else {
		out.Verified = true
	}
	for i, c := range st.PeerCertificates {
		if i == MaxChain {
			out.Findings = append(out.Findings, fmt.Sprintf("the chain has %d certificates; the first %d are reported", len(st.PeerCertificates), MaxChain))
			break
		}
		days := int(math.Floor(c.NotAfter.Sub(now).Hours() / 24))
		cert := certificate{
			Subject: native.Clip(c.Subject.String(), MaxValueBytes), Issuer: native.Clip(c.Issuer.String(), MaxValueBytes),
			SerialNumber: native.Clip(c.SerialNumber.String(), 128),
			NotBefore:    c.NotBefore.UTC().Format(time.RFC3339), NotAfter: c.NotAfter.UTC().Format(time.RFC3339),
			DaysToExpiry: days, DNSNames: []string{}, IsCA: c.IsCA,
		}
		for j, n := range c.DNSNames {
			if j == 20 {
				break
			}
			cert.DNSNames = append(cert.DNSNames, native.Clip(n, 255))
		}
		switch {
		case now.After(c.NotAfter):
			out.Findings = append(out.Findings, fmt.Sprintf("certificate %d expired %d days ago", i, -days))
		case now.Before(c.NotBefore):
			out.Findings = append(out.Findings, fmt.Sprintf("certificate %d is not valid yet", i))
		case days < expiryWarningDays:
			out.Findings = append(out.Findings, fmt.Sprintf("certificate %d expires in %d days", i, days))
		}
		out.Chain = append(out.Chain, cert)
	}
	return out, nil
}

// handshakeReason is a short reason for a failed handshake.
func handshakeReason(err error) string {
	var alert tls.AlertError
	var rec tls.RecordHeaderError
	switch {
	case errors.As(err, &alert):
		return "the server sent the alert " + alert.Error()
	case errors.As(err, &rec):
		return "the server does not speak TLS on this port"
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer in time"
	}
	return "the connection ended"
}
