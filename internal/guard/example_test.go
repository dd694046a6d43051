package guard_test

import (
	"context"
	"fmt"
	"time"

	"github.com/toolhost/toolhost/internal/guard"
)

func Example() {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	g, err := guard.New(guard.Config{Mode: guard.Enforce, Now: func() time.Time { return now }})
	if err != nil {
		panic(err)
	}
	p := guard.Presented{
		Peer:         "[2001:db8:1:2::99]:51000",
		ForwardedFor: []string{"192.0.2.1"}, // not from a trusted proxy: ignored
	}
	c, err := g.Resolve(context.Background(), p, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Tier, c.Key)

	d, release := g.Admit(context.Background(), c, guard.Request{Tool: "pac_allocator", QuotaClass: guard.ClassSolve, Cost: 4, Anonymous: true})
	defer release()
	fmt.Println(d.Allowed, d.Limits.Policy[0], d.Limits.Limit[0])

	d, _ = g.Admit(context.Background(), c, guard.Request{Tool: "port_check", QuotaClass: guard.ClassProbe, Cost: 1, Capability: guard.CapabilityProbe})
	fmt.Println(d.Allowed, d.Reason, d.Reason.Retryable())
	// Output:
	// anonymous ip:2001:db8:1:2::/64
	// true "tools-solve";q=10;w=300;qu="cost-units" "tools-solve";r=6;t=120
	// false unauthenticated false
}
