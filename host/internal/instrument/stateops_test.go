package instrument

import (
	"reflect"
	"testing"
)

func TestStateOps(t *testing.T) {
	_, info := mustRewrite(t, readTestdata(t, "stateops.wat"), Options{})
	want := []string{"table.set", "table.grow", "table.fill", "table.copy", "table.init", "elem.drop", "data.drop"}
	if !reflect.DeepEqual(info.StateOps, want) {
		t.Errorf("StateOps = %v, want %v", info.StateOps, want)
	}
	if info.Start {
		t.Error("Start set for a module without a start section")
	}
	// Reading tables and segments changes nothing.
	_, info = mustRewrite(t, readTestdata(t, "loop.wasm"), Options{})
	if info.StateOps != nil {
		t.Errorf("StateOps = %v for a module that changes no table or segment", info.StateOps)
	}
	if _, info = mustRewrite(t, readTestdata(t, "start.wasm"), Options{}); !info.Start {
		t.Error("Start not set for a module with a start section")
	}
}
