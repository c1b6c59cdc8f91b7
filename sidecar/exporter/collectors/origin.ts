/** The name the built-in collector set is reported under. */
export const builtinOrigin = 'keelson built-in collectors';
