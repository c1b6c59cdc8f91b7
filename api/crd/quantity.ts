/**
 * Kubernetes quantities as the DatabaseCluster API accepts them: the syntax (an OpenAPI pattern
 * every API server enforces), the storage size range (a CEL rule for servers with CEL, and the
 * same check in zod for the operator) and the byte value of a stored claim's size.
 */

const decimalFactors = { k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 } as const;
const binaryFactors = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 } as const;
const factors: Record<string, number> = { '': 1, ...decimalFactors, ...binaryFactors };

/** Bytes of a storage quantity ("10Gi", "500M", "1e9"); undefined when it is not one. */
export function quantityBytes(value: string | number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number') return value;
  const match = /^(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/.exec(value.trim());
  if (!match) return undefined;
  return Number(match[1]) * (factors[match[2] ?? ''] ?? 1);
}

/**
 * A non-negative resource quantity (Kubernetes' own grammar without the minus sign): digits with
 * an optional fraction, then a binary (Ki…Ei) or decimal (n, u, m, k…E) suffix or an exponent.
 */
export const resourceQuantityPattern = '^\\+?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

/** Storage sizes: a plain number of bytes, with an optional fraction and a byte suffix (no exponent, no milli). */
export const storageSizePattern = '^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$';
export const storageSizeMaxLength = 24;

/**
 * Smallest data volume: initdb's files and the first 16 MB WAL segment need about 40 MB, so
 * anything below cannot even bootstrap. Largest: 64Ti, what the big cloud block volumes offer.
 */
export const storageSizeLimits = { min: '64Mi', max: '64Ti' } as const;
const minBytes = quantityBytes(storageSizeLimits.min)!;
const maxBytes = quantityBytes(storageSizeLimits.max)!;

export const storageSizeRangeMessage = `must be between ${storageSizeLimits.min} and ${storageSizeLimits.max}`;

/** Whether a size matching storageSizePattern lies within storageSizeLimits. */
export function storageSizeInRange(size: string): boolean {
  const bytes = quantityBytes(size);
  return bytes !== undefined && bytes >= minBytes && bytes <= maxBytes;
}

function celMap(entries: Record<string, number>, keyOf: (suffix: string) => string): string {
  return `{${Object.entries(entries)
    .map(([suffix, factor]) => `'${keyOf(suffix)}': ${factor.toExponential()}`)
    .join(', ')}}`;
}

/**
 * The range check in CEL with only standard functions and the strings library (no quantity(),
 * which needs Kubernetes 1.29): the byte value is computed as a double from the suffix. A value
 * that does not match the pattern passes here, as the pattern already refuses it.
 */
export function storageSizeRangeRule(): string {
  return `!self.matches('${storageSizePattern.replace(/\\/g, '\\\\')}') || [${celStorageBytes('self')}].all(b, b >= ${minBytes.toExponential()} && b <= ${maxBytes.toExponential()})`;
}

/** The byte value (a CEL double) of the storage size the CEL expression `text` holds, for one matching storageSizePattern. */
export function celStorageBytes(text: string): string {
  const binary = `double(${text}.substring(0, size(${text}) - 2)) * ${celMap(binaryFactors, (s) => s[0]!)}[${text}.substring(size(${text}) - 2, size(${text}) - 1)]`;
  const decimal = `double(${text}.substring(0, size(${text}) - 1)) * ${celMap(decimalFactors, (s) => s)}[${text}.substring(size(${text}) - 1)]`;
  return `(${text}.endsWith('i') ? ${binary} : ${text}.matches('[0-9]$') ? double(${text}) : ${decimal})`;
}
