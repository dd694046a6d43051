// The app's language (en, it, fr, es): chosen in the header, remembered in
// localStorage, English by default. t() looks up the hub's own wording;
// descriptorText() a service's name and description, which come from the
// catalogue's i18n texts (the service's name_i18n_key and
// description_i18n_key), falling back to its English name and description.
import type { Descriptor } from 'toolhost-client';
import { messages, type MessageKey } from './messages';

export const languages = ['en', 'it', 'fr', 'es'] as const;
export type Language = (typeof languages)[number];

const storageKey = 'toolhost.language';

function initial(): Language {
  try {
    const saved = localStorage.getItem(storageKey);
    if (saved && (languages as readonly string[]).includes(saved)) return saved as Language;
  } catch {
    // storage refused: the default
  }
  return 'en';
}

export const lang = $state({ current: initial() });

export function setLanguage(l: Language) {
  lang.current = l;
  try {
    localStorage.setItem(storageKey, l);
  } catch {
    // not remembered
  }
  document.documentElement.lang = l;
}

/** t returns the message key in the current language, {name}s filled in. */
export function t(key: MessageKey, vars: Record<string, string | number> = {}): string {
  const text = messages[lang.current][key] ?? messages.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (m, name: string) => (name in vars ? String(vars[name]) : m));
}

export function descriptorText(d: Descriptor): { name: string; description: string } {
  const own = d.i18n?.[lang.current];
  return {
    name: own?.name || d.name,
    description: own?.description || d.description,
  };
}
