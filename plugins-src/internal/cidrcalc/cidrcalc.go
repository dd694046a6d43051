// Package cidrcalc describes IPv4 and IPv6 prefixes (CIDR blocks, RFC 4632
// and RFC 4291 §2.3) with net/netip: the network, its first and last
// address, the IPv4 netmask and broadcast, the usable host range and the
// counts, and whether an address is in a prefix.
package cidrcalc

import (
	"errors"
	"math/big"
	"net/netip"
)

var (
	// ErrPrefix is returned for text that is not address/length (or a bare
	// address).
	ErrPrefix = errors.New("cidrcalc: not an IPv4 or IPv6 prefix")
	// ErrAddress is returned for text that is not an IP address.
	ErrAddress = errors.New("cidrcalc: not an IPv4 or IPv6 address")
)

// Info describes a prefix. Counts are decimal strings: an IPv6 /0 holds
// 2^128 addresses, beyond any JSON number a client reads exactly.
type Info struct {
	Version      int    // 4 or 6
	Address      string // the address as given, canonical
	Network      string // the prefix with its host bits cleared, canonical
	PrefixLength int
	Netmask      string // the mask written as an address
	First, Last  string // the first and last address of the block
	Broadcast    string // IPv4 with a prefix of at most /30 only: Last
	// FirstHost and LastHost are the usable range: IPv4 without the
	// network and broadcast addresses, except /31 (RFC 3021, point to
	// point) and /32; IPv6 has no broadcast, and its range is the whole
	// block (the subnet-router anycast address, RFC 4291 §2.6.1, is a
	// usable address).
	FirstHost, LastHost string
	Addresses, Hosts    string // counts, in decimal
}

// ParsePrefix reads "address/length"; a bare address is its own /32 or
// /128. A zone (fe80::1%eth0) is refused.
func ParsePrefix(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p, nil
	}
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	return netip.Prefix{}, ErrPrefix
}

// Describe returns the Info of the prefix s.
func Describe(s string) (Info, error) {
	p, err := ParsePrefix(s)
	if err != nil {
		return Info{}, err
	}
	bits, n := p.Addr().BitLen(), p.Bits()
	first := p.Masked().Addr()
	mask := maskAddr(bits, n)
	last := orNot(first, mask)
	in := Info{
		Version: 4, Address: p.Addr().String(), Network: p.Masked().String(), PrefixLength: n,
		Netmask: mask.String(), First: first.String(), Last: last.String(),
		FirstHost: first.String(), LastHost: last.String(),
	}
	size := new(big.Int).Lsh(big.NewInt(1), uint(bits-n))
	hosts := new(big.Int).Set(size)
	if bits == 128 {
		in.Version = 6
	} else if n <= 30 {
		in.Broadcast = last.String()
		in.FirstHost, in.LastHost = first.Next().String(), last.Prev().String()
		hosts.Sub(hosts, big.NewInt(2))
	}
	in.Addresses, in.Hosts = size.String(), hosts.String()
	return in, nil
}

// Contains reports whether address is in the prefix. An address of the
// other family is never in it (an IPv4-mapped IPv6 address is IPv6).
func Contains(prefix, address string) (bool, string, error) {
	p, err := ParsePrefix(prefix)
	if err != nil {
		return false, "", err
	}
	a, err := netip.ParseAddr(address)
	if err != nil || a.Zone() != "" {
		return false, "", ErrAddress
	}
	return p.Masked().Contains(a), p.Masked().String(), nil
}

// maskAddr is the mask of n one bits in an address of bits bits.
func maskAddr(bits, n int) netip.Addr {
	b := make([]byte, bits/8)
	for i := range b {
		switch {
		case n >= 8:
			b[i] = 0xff
		case n > 0:
			b[i] = byte(0xff << (8 - n))
		}
		n -= 8
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// orNot returns a with every bit outside mask set.
func orNot(a, mask netip.Addr) netip.Addr {
	ab, mb := a.AsSlice(), mask.AsSlice()
	for i := range ab {
		ab[i] |= ^mb[i]
	}
	r, _ := netip.AddrFromSlice(ab)
	return r
}
