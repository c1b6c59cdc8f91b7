// admin/i18n: the message catalogue and the choice of locale for envelope messages (`msg`).

/** The locales Soybean ships; everything else falls back to English. */
export type Locale = 'en-US' | 'zh-CN';
export const DEFAULT_LOCALE: Locale = 'en-US';

/**
 * The best supported locale of an Accept-Language header ("zh-CN,zh;q=0.9,en;q=0.8"): entries
 * in order of their q weights; any Chinese tag picks zh-CN, any English one en-US, the rest are
 * skipped. A missing or unreadable header gives English.
 */
export function pickLocale(header: string | undefined): Locale {
  if (!header || header.length > 500) return DEFAULT_LOCALE;
  const ranked = header
    .split(',')
    .map((part, index) => {
      const [tag, ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([01](?:\.\d{0,3})?)\s*$/.exec(p)).find(Boolean);
      return { tag: tag.trim().toLowerCase(), weight: q ? Number(q[1]) : 1, index };
    })
    .filter((entry) => entry.tag && entry.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.index - b.index);
  for (const { tag } of ranked) {
    if (tag === 'zh' || tag.startsWith('zh-')) return 'zh-CN';
    if (tag === 'en' || tag.startsWith('en-')) return 'en-US';
  }
  return DEFAULT_LOCALE;
}

/** The header a client names its own UI language in (Soybean's `lang` setting: zh-CN or en-US). */
export const UI_LANGUAGE_HEADER = 'x-lang';

/** A single language tag as a supported locale (zh, zh-CN, zh-Hans, en, en-GB, ...); undefined otherwise. */
export function supportedLocaleOf(tag: string | undefined): Locale | undefined {
  const value = tag?.trim().toLowerCase().replace(/_/g, '-');
  if (!value || value.length > 35) return undefined;
  if (value === 'zh' || value.startsWith('zh-')) return 'zh-CN';
  if (value === 'en' || value.startsWith('en-')) return 'en-US';
  return undefined;
}

/**
 * The locale of a request's messages: the UI language the client names (X-Lang), since a user who
 * switched the UI to English on a Chinese browser reads English; else the browser's
 * Accept-Language; else English.
 */
export function requestLocale(uiLanguage: string | string[] | undefined, acceptLanguage: string | undefined): Locale {
  const ui = Array.isArray(uiLanguage) ? uiLanguage[0] : uiLanguage;
  return supportedLocaleOf(ui) ?? pickLocale(acceptLanguage);
}
