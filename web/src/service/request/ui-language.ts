import { localStg } from '@/utils/storage';

/**
 * The admin writes its messages in the language the UI shows, named in the X-Lang header (the
 * browser's Accept-Language is only the fallback). Call this in the request's onRequest
 * (src/service/request/index.ts):
 *   Object.assign(config.headers, uiLanguageHeader());
 */
export function uiLanguageHeader(): Record<string, string> {
  const lang = localStg.get('lang');
  return lang ? { 'X-Lang': lang } : {};
}
