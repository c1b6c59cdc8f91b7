/** The few DER (ASN.1) encoders an X.509 certificate needs, and a reader for the parts of one it is signed from. */

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), length(content.length), content]);
}

export const sequence = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
export const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));
export const octetString = (content: Buffer): Buffer => tlv(0x04, content);
export const utf8String = (text: string): Buffer => tlv(0x0c, Buffer.from(text, 'utf8'));
export const boolean = (value: boolean): Buffer => tlv(0x01, Buffer.from([value ? 0xff : 0x00]));
/** [n] EXPLICIT (constructed, context-specific). */
export const explicit = (n: number, content: Buffer): Buffer => tlv(0xa0 | n, content);
/** [n] IMPLICIT primitive (context-specific), e.g. GeneralName dNSName/iPAddress. */
export const implicitPrimitive = (n: number, content: Buffer): Buffer => tlv(0x80 | n, content);

/** A non-negative INTEGER from big-endian bytes (a leading zero keeps it positive). */
export function integer(bytes: Buffer | number): Buffer {
  let b = typeof bytes === 'number' ? Buffer.from([bytes]) : bytes;
  let start = 0;
  while (start < b.length - 1 && b[start] === 0 && b[start + 1] < 0x80) start += 1;
  b = b.subarray(start);
  if (b[0] >= 0x80) b = Buffer.concat([Buffer.from([0]), b]);
  return tlv(0x02, b);
}

export function bitString(content: Buffer, unusedBits = 0): Buffer {
  return tlv(0x03, Buffer.concat([Buffer.from([unusedBits]), content]));
}

export function objectIdentifier(oid: string): Buffer {
  const parts = oid.split('.').map(Number);
  const bytes = [40 * parts[0] + parts[1]];
  for (const part of parts.slice(2)) {
    const chunk: number[] = [];
    let v = part;
    do {
      chunk.unshift(v & 0x7f);
      v = Math.floor(v / 128);
    } while (v > 0);
    for (let i = 0; i < chunk.length - 1; i += 1) chunk[i] |= 0x80;
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** UTCTime (YYMMDDHHMMSSZ) before 2050, GeneralizedTime after, as RFC 5280 requires. */
export function time(date: Date): Buffer {
  const iso = date.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${iso}Z`));
}

/** One DER element read back: its tag, its content and the whole encoding (tag and length included). */
export interface DerElement {
  tag: number;
  content: Buffer;
  encoded: Buffer;
}

/** The elements one after another in `data` (the content of a SEQUENCE, or a whole encoding). */
export function readElements(data: Buffer): DerElement[] {
  const elements: DerElement[] = [];
  let at = 0;
  while (at < data.length) {
    if (at + 2 > data.length) throw new Error('DER: truncated element');
    const tag = data[at]!;
    let size = data[at + 1]!;
    let header = 2;
    if (size & 0x80) {
      const count = size & 0x7f;
      if (count === 0 || count > 4 || at + 2 + count > data.length) throw new Error('DER: unsupported length');
      size = 0;
      for (let i = 0; i < count; i += 1) size = size * 256 + data[at + 2 + i]!;
      header += count;
    }
    const end = at + header + size;
    if (end > data.length) throw new Error('DER: element runs past its container');
    elements.push({ tag, content: data.subarray(at + header, end), encoded: data.subarray(at, end) });
    at = end;
  }
  return elements;
}
