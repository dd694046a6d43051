package pac

// The service's input and output types. The declaration's schemas are
// derived from them (guest.Package.Declaration) and Compute decodes the
// parameters into Input and encodes Output: there is no second,
// hand-written schema. Every amount is a decimal string (decimalPattern);
// docs/tools/pac_allocator.md describes each field with examples.

// Input is the parameters of both operations: a discriminated union on
// operation, whose ops tags give plan its own fields.
type Input struct {
	Operation string    `json:"operation" doc:"value: the holdings' market values and weights. plan: buy orders that invest the contribution and the cash toward the target weights."`
	Currency  string    `json:"currency" pattern:"^[A-Z]{3}$" doc:"The base currency (ISO 4217 code). Cash, contribution, minimum orders, fees and every amount in the result are in it; prices are in each holding's own currency."`
	Holdings  []Holding `json:"holdings" minItems:"1" maxItems:"200" doc:"The instruments held or to be bought, each once."`
	Cash      *string   `json:"cash,omitempty" pattern:"^-?[0-9]{1,12}(\\.[0-9]{1,10})?$" default:"0" doc:"Cash already held, in the base currency. plan invests it with the contribution."`
	FXRates   []FXRate  `json:"fx_rates,omitempty" maxItems:"32" doc:"Exchange rates to the base currency, one per other currency the holdings use. None is fetched: a missing rate is needs_input."`

	Contribution string   `json:"contribution" ops:"plan" pattern:"^-?[0-9]{1,12}(\\.[0-9]{1,10})?$" doc:"The amount to invest now, in the base currency, in addition to cash."`
	Targets      []Target `json:"targets" ops:"plan" minItems:"1" maxItems:"200" doc:"Target weights and buying rules, at most one per holding. A holding without a target has weight 0 and is never bought. The weights sum to exactly 1."`
	Fees         *Fees    `json:"fees,omitempty" ops:"plan" doc:"The fee of one buy order; no fees when absent."`
	MaxOrders    *int     `json:"max_orders,omitempty" ops:"plan" minimum:"1" maximum:"200" doc:"The most buy orders the plan may hold; no limit when absent."`
}

// Holding is one instrument: what is held of it and its price.
type Holding struct {
	InstrumentID string  `json:"instrument_id" minLength:"1" maxLength:"64" doc:"The caller's identifier of the instrument (a ticker, an ISIN); unique in holdings."`
	Quantity     string  `json:"quantity" pattern:"^-?[0-9]{1,12}(\\.[0-9]{1,10})?$" doc:"The quantity held; 0 for an instrument to be bought. Negative is invalid."`
	Price        *string `json:"price,omitempty" pattern:"^-?[0-9]{1,12}(\\.[0-9]{1,10})?$" doc:"The price of one unit in the holding's currency. When it is needed and absent the status is needs_input; zero or negative is invalid."`
	Currency     string  `json:"currency" pattern:"^[A-Z]{3}$" doc:"The currency of the price (ISO 4217 code)."`
}

// FXRate is the value of one unit of a currency in the base currency.
type FXRate struct {
	Currency string `json:"currency" pattern:"^[A-Z]{3}$" doc:"The quoted currency; not the base currency, and given once."`
	Rate     string `json:"rate" pattern:"^-?[0-9]{1,12}(\\.[0-9]{1,10})?$" doc:"Base-currency units per unit of currency; positive."`
}

// Target is the target weight of one holding and the rules for buying it.
type Target struct {
	InstrumentID string  `json:"instrument_id" minLength:"1" maxLength:"64" doc:"A holding's instrument_id."`
	Weight       string  `json:"weight" pattern:"^-?[0-9]{1,12}(\\.[0-9]{1,10})?$" doc:"The target weight, a fraction of the total value (0 to 1)."`
	LotSize      *string `json:"lot_size,omitempty" pattern:"^-?[0-9]{1,12}(\\.[0-9]{1,10})?$" default:"1" doc:"The quantity step of an order: 1 buys whole shares, 0.001 fractions of a share in steps of a thousandth, 10 round lots of ten. Positive."`
	MinOrder     *string `json:"min_order,omitempty" pattern:"^-?[0-9]{1,12}(\\.[0-9]{1,10})?$" default:"0" doc:"The smallest order amount (before fees) in the base currency."`
}

// Fees is the fee of one buy order of amount a (before fees), in the base
// currency: max(minimum, fixed + proportional × a); no order, no fee.
type Fees struct {
	Fixed        *string `json:"fixed,omitempty" pattern:"^-?[0-9]{1,12}(\\.[0-9]{1,10})?$" default:"0" doc:"A fixed fee per order."`
	Proportional *string `json:"proportional,omitempty" pattern:"^-?[0-9]{1,12}(\\.[0-9]{1,10})?$" default:"0" doc:"A fraction of the order amount: 0.0019 is 0.19 %. At least 0 and below 1."`
	Minimum      *string `json:"minimum,omitempty" pattern:"^-?[0-9]{1,12}(\\.[0-9]{1,10})?$" default:"0" doc:"The smallest fee of an order."`
}

// Domain statuses of a result. Every one is a platform success.
const (
	StatusReady      = "ready"
	StatusNeedsInput = "needs_input"
	StatusInvalid    = "invalid"
	StatusInfeasible = "infeasible"
	StatusNoSolution = "no_solution"
)

// Solver statuses, as the solver reported them.
const (
	SolverOptimal    = "optimal"
	SolverFeasible   = "feasible"
	SolverInfeasible = "infeasible"
	SolverNoSolution = "no_solution"
)

// Output is the result of both operations. valuation belongs to value,
// plan and solver to plan; each is present only when the status allows it.
type Output struct {
	Status        string   `json:"status" enum:"ready,needs_input,invalid,infeasible,no_solution" doc:"The domain status. value: ready, needs_input or invalid. plan: also infeasible (the solver proved that no plan exists) and no_solution (its time ran out before it found one). ready is not proof that trades can be executed."`
	Currency      string   `json:"currency" doc:"The base currency."`
	Issues        []Issue  `json:"issues" doc:"Why the status is invalid; empty otherwise."`
	MissingPrices []string `json:"missing_prices" doc:"The instruments whose price is needed and absent, in holdings order."`
	MissingRates  []string `json:"missing_rates" doc:"The currencies whose rate to the base currency is needed and absent, sorted."`

	Valuation *Valuation `json:"valuation,omitempty" ops:"value" doc:"The valuation; present when the status is ready."`
	Plan      *Plan      `json:"plan,omitempty" ops:"plan" doc:"The plan; present when the status is ready."`
	Solver    *Solver    `json:"solver,omitempty" ops:"plan" doc:"What the solver reported; present when it ran."`
}

// Issue is one reason a scenario is invalid: a stable code and the
// JSON pointer of the parameter, never its value.
type Issue struct {
	Code string `json:"code" enum:"negative,not_positive,out_of_range,duplicate,unknown_instrument,weights_sum,base_currency_rate" doc:"negative: below zero. not_positive: zero or below. out_of_range: a weight outside 0..1, a proportional fee outside 0..1 (1 excluded), a lot size so small that one order would need more than 10^9 lots. duplicate: an instrument or a currency given twice. unknown_instrument: a target names no holding. weights_sum: the target weights do not sum to exactly 1. base_currency_rate: a rate given for the base currency."`
	Path string `json:"path" doc:"The JSON pointer of the parameter, such as /holdings/2/quantity."`
}

// Valuation is the result of value.
type Valuation struct {
	Positions     []Position `json:"positions" doc:"One per holding, in holdings order."`
	HoldingsValue string     `json:"holdings_value" doc:"The sum of the market values."`
	Cash          string     `json:"cash" doc:"The cash."`
	Total         string     `json:"total" doc:"holdings_value + cash."`
	CashWeight    string     `json:"cash_weight" doc:"cash / total; 0 when the total is 0."`
}

// Position is one holding valued.
type Position struct {
	InstrumentID string  `json:"instrument_id"`
	Quantity     string  `json:"quantity" doc:"The quantity, exactly, in its shortest decimal form (12.50 is 12.5)."`
	Price        *string `json:"price,omitempty" doc:"The price in currency, exactly, in its shortest decimal form; absent when it was not given (nothing held)."`
	Currency     string  `json:"currency"`
	Rate         *string `json:"rate,omitempty" doc:"The rate to the base currency, exactly; 1 for the base currency; absent when it was not given (nothing held)."`
	MarketValue  string  `json:"market_value" doc:"quantity × price × rate."`
	Weight       string  `json:"weight" doc:"market_value / total; 0 when the total is 0."`
}

// Plan is the result of plan.
type Plan struct {
	Orders          []Order      `json:"orders" doc:"The buy orders, in holdings order; empty when buying nothing is best."`
	Available       string       `json:"available" doc:"contribution + cash: what the orders and their fees may spend."`
	Invested        string       `json:"invested" doc:"The sum of the order amounts."`
	Fees            string       `json:"fees" doc:"The sum of the order fees."`
	RemainingCash   string       `json:"remaining_cash" doc:"available − invested − fees."`
	ValueBefore     string       `json:"value_before" doc:"The holdings' market value before the orders."`
	ValueAfter      string       `json:"value_after" doc:"value_before + invested."`
	ReferenceTotal  string       `json:"reference_total" doc:"value_before + available: the total the target values are measured against (target value = weight × reference_total)."`
	DeviationBefore string       `json:"deviation_before" doc:"The total absolute deviation from the target values with no order."`
	Deviation       string       `json:"deviation" doc:"The total absolute deviation from the target values after the orders: what the plan minimises."`
	Allocation      []Allocation `json:"allocation" doc:"Every holding before and after the orders, in holdings order."`
	Unaffordable    []string     `json:"unaffordable" doc:"Underweight instruments whose smallest possible order (lot size, minimum order, fee) costs more than available."`
}

// Order is one buy order.
type Order struct {
	InstrumentID string `json:"instrument_id"`
	Lots         int64  `json:"lots" doc:"The number of lots bought."`
	Quantity     string `json:"quantity" doc:"lots × lot_size, exactly."`
	Price        string `json:"price" doc:"The price in currency, exactly, in its shortest decimal form."`
	Currency     string `json:"currency"`
	Amount       string `json:"amount" doc:"quantity × price × rate, in the base currency."`
	Fee          string `json:"fee" doc:"The order's fee, in the base currency."`
}

// Allocation is one holding before and after the orders.
type Allocation struct {
	InstrumentID string `json:"instrument_id"`
	TargetWeight string `json:"target_weight" doc:"The target weight, exactly; 0 without a target."`
	TargetValue  string `json:"target_value" doc:"target_weight × reference_total."`
	ValueBefore  string `json:"value_before"`
	ValueAfter   string `json:"value_after"`
	WeightBefore string `json:"weight_before" doc:"value_before / reference_total (which counts the available cash); 0 when it is 0."`
	WeightAfter  string `json:"weight_after" doc:"value_after / (value_after of all + remaining_cash); 0 when that is 0."`
	Deviation    string `json:"deviation" doc:"|value_after − target_value|."`
}

// Solver is what the MILP solver reported.
type Solver struct {
	Engine      string   `json:"engine" doc:"The solver: cbc."`
	Status      string   `json:"status" enum:"optimal,feasible,infeasible,no_solution" doc:"optimal: proven optimal. feasible: stopped at its time limit with a plan that is not proven optimal (see gap). infeasible: proven infeasible. no_solution: stopped at its time limit without a plan."`
	Gap         *float64 `json:"gap,omitempty" doc:"The relative gap between the plan's objective and the solver's best bound, (objective − bound) / |objective|, when it stopped with a plan and printed both."`
	TimeMS      int64    `json:"time_ms" doc:"The solver's wall-clock time, measured by the tool."`
	TimeLimitMS int64    `json:"time_limit_ms" doc:"The time limit the solver was given: the claimed engine window."`
	Adjusted    bool     `json:"adjusted" doc:"True when the exact check of the solver's lots (done in decimal arithmetic) had to remove lots that its floating-point tolerance let through; the plan is then feasible but not proven optimal."`
}
