package guest

import (
	"errors"
	"reflect"
)

// serviceMeta is a Service's metadata without its type parameters.
type serviceMeta struct {
	code, name, description string
	nameKey, descriptionKey string
	texts                   map[string]Text
	category, iconKey       string
	ui                      UI
	documentation           Documentation
	operations              []Operation
	platform                *Platform
	hasCompute              bool
}

// service is a compiled Service: the model compute reads, built once (at
// Register) and only looked up per item.
type service struct {
	code     string
	ops      []string
	opSet    map[string]bool
	in, out  *node
	opIndex  []int        // the input's operation field
	opOffset uintptr      // and its offset
	decl     *serviceJSON // with full checks only
	// call computes an item whose parameters were parsed by the strict
	// path; callRaw one whose parameters are still JSON text (which the
	// input's strings may share when alias is true), and reports false,
	// without computing, when the fast decoder gives up on them.
	call    func(ctx *Context, op string, params map[string]any) ([]byte, *Error)
	callRaw func(ctx *Context, op string, params []byte, alias bool) ([]byte, *Error, bool)
}

func newService(m serviceMeta, inT, outT reflect.Type, checks bool) (*service, error) {
	if checks {
		if err := m.check(); err != nil {
			return nil, err
		}
	}
	svc := &service{code: m.code, opSet: map[string]bool{}}
	for _, op := range m.operations {
		svc.ops = append(svc.ops, op.Name)
		svc.opSet[op.Name] = true
	}
	b := &builder{ops: svc.ops, checks: checks}
	in, err := b.root(inT)
	if err != nil {
		return nil, errors.New("input type: " + err.Error())
	}
	opField := in.byName["operation"]
	if opField == nil || opField.node.kind != kindString || opField.optional() {
		return nil, errors.New("input type " + typeName(inT) + " needs a required string field tagged json:\"operation\" (not a pointer, no omitempty)")
	}
	c := opField.c
	if len(c.enum) > 0 || c.pattern != "" || c.minLength >= 0 || c.maxLength >= 0 || opField.ops != nil {
		return nil, errors.New(opField.where + ": the operation field takes only a doc tag: its values are the service's operations")
	}
	out, err := b.root(outT)
	if err != nil {
		return nil, errors.New("output type: " + err.Error())
	}
	svc.in, svc.out, svc.opIndex, svc.opOffset = in, out, opField.index, opField.offset
	in.acceptTables(svc.ops)
	out.acceptTables(svc.ops)
	if checks {
		svc.describe(m)
	}
	return svc, nil
}
