//go:build guestgen

package guest

import (
	"errors"
	"reflect"
)

// A build with -tags guestgen takes the declaration from guestgen's output
// (UseDeclaration) instead of deriving it, so that it links none of
// declare.go, schema.go and constraints.go: describe's checks ran when
// guestgen derived the document, natively, from the same types and
// metadata. Compute is unchanged: its model of the types is built by
// Register as in any build.

// errNotGenerated is returned by describe in a guestgen build whose
// package has no generated declaration.
var errNotGenerated = errors.New("built with -tags guestgen but the package has no generated declaration: run go generate (guestgen writes guest_gen.go), or build without the tag")

// describeRegistered returns gen, guestgen's declaration document.
func describeRegistered(_ Package, gen string) ([]byte, error) {
	if gen == "" {
		return nil, errNotGenerated
	}
	return []byte(gen), nil
}

// declare is not available without the derivation.
func declare(Package) ([]byte, error) {
	return nil, errors.New("Package.Declaration derives the declaration, which a build with -tags guestgen leaves out")
}

// serviceJSON is the declaration of a service, never built here.
type serviceJSON struct{}

// check is describe's; compute needs none of it.
func (serviceMeta) check() error { return nil }

// describe is describe's; compute needs none of it.
func (*service) describe(serviceMeta) {}

// constraintTags reads none of the constraint tags: compute does not use
// them.
func (*builder) constraintTags(*field, reflect.StructTag) error { return nil }
