package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/cidrcalc"
)

// ipCIDRInput is the ip_cidr service's parameters.
type ipCIDRInput struct {
	Operation string `json:"operation" doc:"describe: the block's addresses and counts. contains: whether the block holds address."`
	CIDR      string `json:"cidr" maxLength:"64" doc:"An IPv4 or IPv6 block as address/length (192.168.1.0/24, 2001:db8::/32); host bits may be set (192.168.1.77/24 is 192.168.1.0/24). A bare address is its own /32 or /128. Zones (%eth0) are refused."`
	Address   string `json:"address" ops:"contains" maxLength:"64" doc:"The IPv4 or IPv6 address to look for."`
}

// ipCIDROutput is its result.
type ipCIDROutput struct {
	Network      string `json:"network" doc:"The block with its host bits cleared, canonical (IPv6 in RFC 5952's lower-case compressed form)."`
	Version      int    `json:"version" ops:"describe" doc:"4 or 6."`
	Address      string `json:"address" ops:"describe" doc:"The address as given, canonical."`
	PrefixLength int    `json:"prefix_length" ops:"describe" doc:"The prefix length in bits."`
	Netmask      string `json:"netmask" ops:"describe" doc:"The mask written as an address (255.255.255.0, ffff:ffff::)."`
	First        string `json:"first" ops:"describe" doc:"The first address of the block (the network address)."`
	Last         string `json:"last" ops:"describe" doc:"The last address of the block."`
	Broadcast    string `json:"broadcast,omitempty" ops:"describe" doc:"IPv4 blocks of /30 or larger only: the broadcast address, which is last. IPv6 has no broadcast."`
	FirstHost    string `json:"first_host" ops:"describe" doc:"The first usable host: IPv4 leaves out the network and broadcast addresses except in a /31 (RFC 3021) or /32; in IPv6 every address is usable."`
	LastHost     string `json:"last_host" ops:"describe" doc:"The last usable host, as first_host."`
	Addresses    string `json:"addresses" ops:"describe" doc:"How many addresses the block holds, in decimal (an IPv6 /0 holds 2^128)."`
	Hosts        string `json:"hosts" ops:"describe" doc:"How many usable hosts, in decimal."`
	Contains     bool   `json:"contains" ops:"contains" doc:"Whether address is in the block. An address of the other family never is (an IPv4-mapped IPv6 address is IPv6)."`
}

func computeIPCIDR(ctx *guest.Context, in ipCIDRInput) (ipCIDROutput, error) {
	invalid := map[error]string{
		cidrcalc.ErrPrefix:  "cidr is not an IPv4 or IPv6 block such as 192.168.1.0/24 or 2001:db8::/32",
		cidrcalc.ErrAddress: "address is not an IPv4 or IPv6 address",
	}
	switch in.Operation {
	case "describe":
		i, err := cidrcalc.Describe(in.CIDR)
		if err != nil {
			return ipCIDROutput{}, bundled.ToolError(err, invalid)
		}
		return ipCIDROutput{Network: i.Network, Version: i.Version, Address: i.Address, PrefixLength: i.PrefixLength,
			Netmask: i.Netmask, First: i.First, Last: i.Last, Broadcast: i.Broadcast, FirstHost: i.FirstHost,
			LastHost: i.LastHost, Addresses: i.Addresses, Hosts: i.Hosts}, nil
	case "contains":
		ok, network, err := cidrcalc.Contains(in.CIDR, in.Address)
		return ipCIDROutput{Network: network, Contains: ok}, bundled.ToolError(err, invalid)
	}
	return ipCIDROutput{}, guest.Failed("unknown operation")
}
