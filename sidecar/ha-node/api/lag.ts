const units: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3, tb: 1024 ** 4 };

/** Parses a `lag` query value: bytes ("1048576") or a size with a unit ("16kB", "64MB", "1GB"). */
export function parseLag(raw: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?[bB])?\s*$/.exec(raw);
  if (!match) return undefined;
  const factor = match[2] ? units[match[2].toLowerCase()] : 1;
  if (factor === undefined) return undefined;
  return Math.floor(Number(match[1]) * factor);
}
