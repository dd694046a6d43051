package policy_test

import (
	"errors"
	"fmt"

	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// The plan operation of the PAC allocator declares more bytes than the
// platform allows and budgets equal to the platform's: the byte limits are
// capped and its server bound fits the request deadline with no slack.
func ExampleClamp() {
	plan := policy.DefaultOperation("plan")
	plan.Deterministic = true
	plan.MaxParameterBytes = 256 * policy.KiB
	plan.MaxResultBytes = 512 * policy.KiB
	plan.EngineTimeoutMS = 30_000
	plan.SoftTimeoutMS = 44_000
	plan.HardTimeoutMS = 45_000
	plan.QueueTimeoutMS = 5_000
	plan.CleanupTimeoutMS = 5_000
	plan.RequestTimeoutMS = 59_000
	plan.ClientTimeoutMS = 65_000

	e, err := policy.Clamp(policy.DefaultPlatform(), plan)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("parameters %d KiB, results %d KiB\n", e.MaxParameterBytes/policy.KiB, e.MaxResultBytes/policy.KiB)
	fmt.Printf("engine %d ms, soft %d ms, hard %d ms\n", e.EngineTimeoutMS, e.SoftTimeoutMS, e.HardTimeoutMS)
	fmt.Printf("server bound %d ms, request %d ms, client %d ms\n", e.ServerBoundMS(), e.RequestTimeoutMS, e.ClientTimeoutMS)

	plan.RequestTimeoutMS = 58_999
	_, err = policy.Clamp(policy.DefaultPlatform(), plan)
	code, _ := toolerr.CodeOf(err)
	fmt.Println(code, errors.Is(err, policy.ErrServerBound))
	fmt.Println(err)
	// Output:
	// parameters 128 KiB, results 256 KiB
	// engine 30000 ms, soft 44000 ms, hard 45000 ms
	// server bound 59000 ms, request 59000 ms, client 65000 ms
	// invalid_operation_policy true
	// policy: operation "plan": server_bound_within_request (request_timeout_ms): server bound 59000 ms (ingress 2000 + queue 5000 + hard 45000 + cleanup 5000 + response reserve 2000) exceeds request deadline 58999 ms
}
