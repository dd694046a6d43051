package instrument

// stateOpSet is a set of the instructions Info.StateOps names.
type stateOpSet uint8

const (
	opTableSet stateOpSet = 1 << iota
	opTableGrow
	opTableFill
	opTableCopy
	opTableInit
	opElemDrop
	opDataDrop
)

// stateOpNames are the text format's names, in Info.StateOps order.
var stateOpNames = [...]struct {
	op   stateOpSet
	name string
}{
	{opTableSet, "table.set"},
	{opTableGrow, "table.grow"},
	{opTableFill, "table.fill"},
	{opTableCopy, "table.copy"},
	{opTableInit, "table.init"},
	{opElemDrop, "elem.drop"},
	{opDataDrop, "data.drop"},
}

// names returns the set's instruction names, nil for the empty set.
func (s stateOpSet) names() []string {
	var out []string
	for _, n := range stateOpNames {
		if s&n.op != 0 {
			out = append(out, n.name)
		}
	}
	return out
}
