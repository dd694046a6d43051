// The privacy masking contract of renderers that show money, holdings or
// rates: money only through formatMoney with an explicit sensitivity, held
// quantities only through maskableQuantity, rates and percentages through
// formatRate (explicitly public), and "—" for a missing value. With "hide
// amounts" on (Settings, remembered in localStorage), sensitive money and
// quantities render as a mask; the values never enter attributes or URLs.
import { lang } from './i18n.svelte';

const storageKey = 'toolhost.hideAmounts';

function initial(): boolean {
  try {
    return localStorage.getItem(storageKey) === 'true';
  } catch {
    return false;
  }
}

export const privacy = $state({ hide: initial() });

export function setHideAmounts(v: boolean) {
  privacy.hide = v;
  try {
    localStorage.setItem(storageKey, String(v));
  } catch {
    // not remembered
  }
}

export const missing = '—';
export const mask = '•••••';

export type Sensitivity = 'sensitive' | 'public';

type Decimal = Intl.StringNumericLiteral;

function present(v: string | null | undefined): v is string {
  return typeof v === 'string' && v !== '';
}

/** formatMoney formats a decimal amount in currency; sensitivity is required. */
export function formatMoney(value: string | null | undefined, currency: string, sensitivity: Sensitivity): string {
  if (!present(value)) return missing;
  if (sensitivity === 'sensitive' && privacy.hide) return mask;
  try {
    return new Intl.NumberFormat(lang.current, { style: 'currency', currency, maximumFractionDigits: 10 }).format(value as Decimal);
  } catch {
    return `${value} ${currency}`;
  }
}

/** maskableQuantity formats a held quantity, masked when amounts are hidden. */
export function maskableQuantity(value: string | null | undefined): string {
  if (!present(value)) return missing;
  if (privacy.hide) return mask;
  return new Intl.NumberFormat(lang.current, { maximumFractionDigits: 10 }).format(value as Decimal);
}

/** formatRate formats a fraction (0.25) as a percentage; rates are public. */
export function formatRate(value: string | null | undefined): string {
  if (!present(value)) return missing;
  return new Intl.NumberFormat(lang.current, { style: 'percent', maximumFractionDigits: 4 }).format(value as Decimal);
}

/** formatFactor formats a public plain number (an exchange rate, a count). */
export function formatFactor(value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === '') return missing;
  return new Intl.NumberFormat(lang.current, { maximumFractionDigits: 10 }).format(value as Decimal);
}
