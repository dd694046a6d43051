package netprobe

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// recordTypes are the record types dns_lookup answers, in report order.
var recordTypes = []string{"A", "AAAA", "CNAME", "MX", "TXT", "NS"}

// dnsInput is the input of dns_lookup.
type dnsInput struct {
	Operation string   `json:"operation" doc:"lookup: look up the name's records with the host's resolver."`
	Name      string   `json:"name" minLength:"1" maxLength:"254" pattern:"^[0-9A-Za-z._-]+$" doc:"The DNS name to look up, e.g. example.com. An IP address is refused, and so is a name with an address in a private, loopback, link-local, CGNAT, multicast, reserved or cloud metadata range."`
	Types     []string `json:"types,omitempty" maxItems:"6" enum:"A,AAAA,CNAME,MX,TXT,NS" default:"[\"A\",\"AAAA\",\"CNAME\",\"MX\",\"TXT\",\"NS\"]" doc:"The record types to look up; all six when omitted."`
}

func (in *dnsInput) SelectedOperation() string { return in.Operation }

// dnsOutput is the result of dns_lookup.
type dnsOutput struct {
	Name    string      `json:"name" doc:"The name as given."`
	Answers []dnsAnswer `json:"answers" doc:"One entry per record type asked, in the order A, AAAA, CNAME, MX, TXT, NS."`
}

type dnsAnswer struct {
	Type      string   `json:"type" enum:"A,AAAA,CNAME,MX,TXT,NS" doc:"The record type."`
	Status    string   `json:"status" enum:"ok,no_records,error" doc:"ok: records found; no_records: the name has none of this type (or does not exist); error: the lookup failed (no answer in time, a server failure)."`
	Records   []string `json:"records" maxItems:"20" doc:"The records, at most 20, sorted: an address for A and AAAA, the canonical name for CNAME, \"<preference> <host>\" for MX, the text for TXT (at most 1024 bytes each), the name server for NS."`
	Truncated bool     `json:"truncated" doc:"Whether records were left out (more than 20) or cut (TXT over 1024 bytes)."`
}

// dnsTimeout bounds each lookup; the engine window bounds them all.
const dnsTimeout = 2 * time.Second

// dnsLookup looks up each asked type with the host's resolver,
// checkpointing between them. Before any, it resolves the name's addresses
// and refuses it when any of them is refused: a probe does not map
// internal names.
func dnsLookup(pc *probeContext, in *dnsInput) (dnsOutput, error) {
	name := strings.TrimSuffix(in.Name, ".")
	if _, err := netip.ParseAddr(name); err == nil {
		return dnsOutput{}, native.Refuse(toolerr.InvalidParameters, "name: an IP address is not a DNS name")
	}
	if err := checkHost(name); err != nil {
		return dnsOutput{}, native.Refuse(toolerr.InvalidParameters, "name: not a DNS name")
	}
	types := recordTypes
	if len(in.Types) > 0 {
		types = nil
		for _, t := range recordTypes {
			if slices.Contains(in.Types, t) {
				types = append(types, t)
			}
		}
		if len(types) == 0 {
			return dnsOutput{}, native.Refuse(toolerr.InvalidParameters, "types: no known record type")
		}
	}
	addrs, err := pc.lookupAddrs(name)
	if err != nil {
		return dnsOutput{}, err
	}
	for _, a := range addrs {
		if reason, ok := pc.guard.check(a); !ok {
			return dnsOutput{}, refusal(reason)
		}
	}
	out := dnsOutput{Name: in.Name, Answers: []dnsAnswer{}}
	for _, typ := range types {
		if err := pc.native.Checkpoint(); err != nil {
			return dnsOutput{}, err
		}
		records, err := pc.lookup(name, typ, addrs)
		if pc.ctx.Err() != nil {
			return dnsOutput{}, windowOut(pc)
		}
		a := dnsAnswer{Type: typ, Status: "ok", Records: []string{}}
		var dnsErr *net.DNSError
		switch {
		case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
			a.Status = "no_records"
		case err != nil:
			a.Status = "error"
		case len(records) == 0:
			a.Status = "no_records"
		}
		slices.Sort(records)
		records = slices.Compact(records)
		if len(records) > MaxRecords {
			records, a.Truncated = records[:MaxRecords], true
		}
		for _, r := range records {
			c := native.Clip(r, MaxValueBytes)
			a.Truncated = a.Truncated || c != r
			a.Records = append(a.Records, c)
		}
		out.Answers = append(out.Answers, a)
	}
	return out, nil
}

// lookupAddrs returns the name's addresses; a name with none (or none at
// all) gives an empty list, any other failure an error.
func (pc *probeContext) lookupAddrs(name string) ([]netip.Addr, error) {
	ctx, cancel := context.WithTimeout(pc.ctx, dnsTimeout)
	defer cancel()
	addrs, err := pc.resolver.LookupNetIP(ctx, "ip", name)
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, lookupError(pc, err)
	}
	return addrs, nil
}

// lookup returns the records of one type. A and AAAA come from the
// addresses already resolved and checked.
func (pc *probeContext) lookup(name, typ string, addrs []netip.Addr) ([]string, error) {
	ctx, cancel := context.WithTimeout(pc.ctx, dnsTimeout)
	defer cancel()
	var out []string
	switch typ {
	case "A", "AAAA":
		for _, a := range addrs {
			a = a.Unmap()
			if a.Is4() == (typ == "A") {
				out = append(out, a.String())
			}
		}
	case "CNAME":
		c, err := pc.resolver.LookupCNAME(ctx, name)
		if err != nil {
			return nil, err
		}
		if c = strings.TrimSuffix(c, "."); !strings.EqualFold(c, name) {
			out = append(out, c+".")
		}
	case "MX":
		mxs, err := pc.resolver.LookupMX(ctx, name)
		if err != nil {
			return nil, err
		}
		for _, mx := range mxs {
			out = append(out, strconv.Itoa(int(mx.Pref))+" "+mx.Host)
		}
	case "TXT":
		txts, err := pc.resolver.LookupTXT(ctx, name)
		if err != nil {
			return nil, err
		}
		out = txts
	case "NS":
		nss, err := pc.resolver.LookupNS(ctx, name)
		if err != nil {
			return nil, err
		}
		for _, ns := range nss {
			out = append(out, ns.Host)
		}
	}
	return out, nil
}
