const newline = Buffer.from('\n');

/**
 * Appends bytes and short texts to one growing Buffer. The fresh part of a scrape is written this
 * way so that it costs the V8 heap only its number strings: the fixed parts (headers, metric names
 * with their labels) are kept as Buffers and copied, not concatenated into new strings.
 */
export class ByteWriter {
  private buffer: Buffer;
  private length = 0;

  constructor(sizeHint: number) {
    this.buffer = Buffer.allocUnsafe(Math.max(256, sizeHint));
  }

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + bytes));
    this.buffer.copy(next, 0, 0, this.length);
    this.buffer = next;
  }

  bytes(chunk: Uint8Array): void {
    this.reserve(chunk.length);
    this.buffer.set(chunk, this.length);
    this.length += chunk.length;
  }

  text(value: string): void {
    this.reserve(Buffer.byteLength(value));
    this.length += this.buffer.write(value, this.length);
  }

  /** `<prefix><value>\n`: a sample line whose name and labels were encoded in advance. */
  sample(prefix: Uint8Array, value: string): void {
    this.bytes(prefix);
    this.text(value);
    this.bytes(newline);
  }

  get size(): number {
    return this.length;
  }

  result(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}
