// What the planner reads of a pac_allocator result. The output codec
// (generated from the contract) has already accepted the result; these are
// the members the renderer displays, not a second contract.
export interface PacIssue { code: string; path: string }
export interface PacResult {
  status: string;
  currency: string;
  issues: PacIssue[];
  missing_prices: string[];
  missing_rates: string[];
  valuation?: {
    positions: { instrument_id: string; quantity: string; currency: string; market_value: string; price?: string; rate?: string; weight: string }[];
    holdings_value: string;
    cash: string;
    total: string;
    cash_weight: string;
  };
  plan?: {
    orders: { instrument_id: string; lots: number; quantity: string; price: string; currency: string; amount: string; fee: string }[];
    available: string;
    invested: string;
    fees: string;
    remaining_cash: string;
    value_before: string;
    value_after: string;
    reference_total: string;
    deviation_before: string;
    deviation: string;
    allocation: { instrument_id: string; target_weight: string; target_value: string; value_before: string; value_after: string; weight_before: string; weight_after: string; deviation: string }[];
    unaffordable: string[];
  };
  solver?: { engine: string; status: string; gap?: number; time_ms: number; time_limit_ms: number; adjusted: boolean };
}
