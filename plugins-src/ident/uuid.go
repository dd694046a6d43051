package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/uuidinfo"
)

// uuidInput is the uuid service's parameters.
type uuidInput struct {
	Operation string `json:"operation" doc:"inspect: read a UUID's version, variant and time. v3, v5: the name-based UUID of name in namespace (MD5 or SHA-1)."`
	UUID      string `json:"uuid" ops:"inspect" maxLength:"64" doc:"The UUID: 8-4-4-4-12 hex digits of either case, optionally in braces or after urn:uuid:, or 32 hex digits."`
	Namespace string `json:"namespace" ops:"v3,v5" maxLength:"64" doc:"dns, url, oid or x500 (RFC 9562 section 6.6), or a namespace UUID."`
	Name      string `json:"name" ops:"v3,v5" maxLength:"130048" doc:"The name; its UTF-8 bytes are hashed."`
}

// uuidOutput is its result.
type uuidOutput struct {
	UUID    string `json:"uuid" doc:"The UUID, canonical: 36 lower-case characters."`
	URN     string `json:"urn" doc:"The UUID as a URN, urn:uuid:..."`
	Version int    `json:"version" ops:"inspect" doc:"The version field, 0 to 15; meaningful for the rfc9562 variant."`
	Variant string `json:"variant" ops:"inspect" enum:"rfc9562,ncs,microsoft,future" doc:"rfc9562 (RFC 4122 and 9562), ncs (backward compatibility), microsoft, or future (reserved)."`
	Time    string `json:"time,omitempty" ops:"inspect" doc:"Versions 1, 6 and 7 of the rfc9562 variant: the instant the UUID holds, RFC 3339 at Z."`
	Special string `json:"special,omitempty" ops:"inspect" enum:"nil,max" doc:"nil for the Nil UUID (all zeros), max for the Max UUID (all ones)."`
}

func computeUUID(ctx *guest.Context, in uuidInput) (uuidOutput, error) {
	invalid := map[error]string{
		uuidinfo.ErrUUID:      "uuid is not a UUID (8-4-4-4-12 hex digits, optionally in braces or after urn:uuid:, or 32 hex digits)",
		uuidinfo.ErrNamespace: "namespace is not dns, url, oid, x500 or a UUID",
		uuidinfo.ErrVersion:   "name-based versions are 3 and 5",
	}
	switch in.Operation {
	case "inspect":
		i, err := uuidinfo.Inspect(in.UUID)
		if err != nil {
			return uuidOutput{}, bundled.ToolError(err, invalid)
		}
		return uuidOutput{UUID: i.UUID, URN: i.URN, Version: i.Version, Variant: i.Variant, Time: i.Time, Special: i.Special}, nil
	case "v3", "v5":
		version := 3
		if in.Operation == "v5" {
			version = 5
		}
		u, err := uuidinfo.NameBased(version, in.Namespace, in.Name)
		if err != nil {
			return uuidOutput{}, bundled.ToolError(err, invalid)
		}
		return uuidOutput{UUID: u, URN: "urn:uuid:" + u}, nil
	}
	return uuidOutput{}, guest.Failed("unknown operation")
}
