/**
 * Just enough Kubernetes protobuf to accept what kubectl's imperative generators send
 * (`kubectl create configmap|secret|namespace|serviceaccount`) and the DeleteOptions body of
 * client-go deletes (helm uninstall): the `k8s\0` envelope and the fields of those kinds.
 * Everything else in protobuf stays a 415.
 */
import { ApiError } from '../errors.js';
import type { JsonObject } from '../types.js';

type Field = { number: number; wire: number; value: bigint | Buffer };

function readVarint(buf: Buffer, pos: number): [bigint, number] {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    if (pos >= buf.length) throw new Error('truncated varint');
    const byte = buf[pos++];
    result |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return [result, pos];
    shift += 7n;
  }
}

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const [key, next] = readVarint(buf, pos);
    pos = next;
    const number = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) {
      const [v, after] = readVarint(buf, pos);
      out.push({ number, wire, value: v });
      pos = after;
    } else if (wire === 2) {
      const [len, after] = readVarint(buf, pos);
      const end = after + Number(len);
      if (end > buf.length) throw new Error('truncated field');
      out.push({ number, wire, value: buf.subarray(after, end) });
      pos = end;
    } else if (wire === 1) {
      out.push({ number, wire, value: buf.subarray(pos, pos + 8) });
      pos += 8;
    } else if (wire === 5) {
      out.push({ number, wire, value: buf.subarray(pos, pos + 4) });
      pos += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

const text = (f: Field): string => (f.value as Buffer).toString('utf8');
const bytes = (f: Field): Buffer => f.value as Buffer;
const flag = (f: Field): boolean => (f.value as bigint) !== 0n;

function mapEntries(list: Field[], number: number, value: (f: Field) => string): Record<string, string> | undefined {
  const entries = list.filter((f) => f.number === number);
  if (entries.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const e of entries) {
    const inner = fields(bytes(e));
    const k = inner.find((f) => f.number === 1);
    const v = inner.find((f) => f.number === 2);
    out[k ? text(k) : ''] = v ? value(v) : '';
  }
  return out;
}

function objectMeta(buf: Buffer): JsonObject {
  const list = fields(buf);
  const meta: JsonObject = {};
  for (const f of list) {
    if (f.number === 1) meta.name = text(f);
    else if (f.number === 2) meta.generateName = text(f);
    else if (f.number === 3) meta.namespace = text(f);
    else if (f.number === 14) meta.finalizers = [...((meta.finalizers as string[]) ?? []), text(f)];
  }
  const labels = mapEntries(list, 11, text);
  const annotations = mapEntries(list, 12, text);
  if (labels) meta.labels = labels;
  if (annotations) meta.annotations = annotations;
  return meta;
}

type Decoder = (list: Field[]) => JsonObject;

const decoders: Record<string, Decoder> = {
  ConfigMap: (list) => ({
    data: mapEntries(list, 2, text),
    binaryData: mapEntries(list, 3, (f) => bytes(f).toString('base64')),
    immutable: list.some((f) => f.number === 4) ? flag(list.find((f) => f.number === 4) as Field) : undefined,
  }),
  Secret: (list) => ({
    data: mapEntries(list, 2, (f) => bytes(f).toString('base64')),
    type: list.some((f) => f.number === 3) ? text(list.find((f) => f.number === 3) as Field) : undefined,
    stringData: mapEntries(list, 4, text),
    immutable: list.some((f) => f.number === 5) ? flag(list.find((f) => f.number === 5) as Field) : undefined,
  }),
  Namespace: (list) => {
    const spec = list.find((f) => f.number === 2);
    const finalizers = spec
      ? fields(bytes(spec))
          .filter((f) => f.number === 1)
          .map(text)
      : [];
    return finalizers.length > 0 ? { spec: { finalizers } } : {};
  },
  ServiceAccount: (list) => ({
    automountServiceAccountToken: list.some((f) => f.number === 4) ? flag(list.find((f) => f.number === 4) as Field) : undefined,
  }),
};

/** meta/v1 DeleteOptions: no ObjectMeta, its own field numbers (generated.proto). */
function deleteOptionsBody(list: Field[]): JsonObject {
  const body: JsonObject = {};
  for (const f of list) {
    if (f.number === 1) body.gracePeriodSeconds = Number(BigInt.asIntN(64, f.value as bigint));
    else if (f.number === 2) {
      const pre: JsonObject = {};
      for (const p of fields(bytes(f))) {
        if (p.number === 1) pre.uid = text(p);
        else if (p.number === 2) pre.resourceVersion = text(p);
      }
      body.preconditions = pre;
    } else if (f.number === 3) body.orphanDependents = flag(f);
    else if (f.number === 4) body.propagationPolicy = text(f);
    else if (f.number === 5) body.dryRun = [...((body.dryRun as string[] | undefined) ?? []), text(f)];
  }
  return body;
}

/** Decodes a `k8s\0`-prefixed protobuf body of a supported kind into JSON, or answers 415. */
export function decodeProtobuf(raw: Buffer): JsonObject {
  const unsupported = (why: string): ApiError =>
    new ApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (protobuf: ${why})`,
    );
  if (raw.length < 4 || raw.subarray(0, 4).toString('latin1') !== 'k8s\0') throw unsupported('missing k8s envelope');
  try {
    const envelope = fields(raw.subarray(4));
    const typeMeta = envelope.find((f) => f.number === 1);
    const payload = envelope.find((f) => f.number === 2);
    const tm = typeMeta ? fields(bytes(typeMeta)) : [];
    const apiVersion = tm.find((f) => f.number === 1);
    const kind = tm.find((f) => f.number === 2);
    const kindName = kind ? text(kind) : '';
    if (kindName === 'DeleteOptions') {
      return { apiVersion: apiVersion ? text(apiVersion) : 'meta.k8s.io/v1', kind: kindName, ...deleteOptionsBody(payload ? fields(bytes(payload)) : []) };
    }
    const decoder = decoders[kindName];
    if (!decoder || !payload) throw unsupported(`kind ${kindName || '(none)'} is not supported`);
    const list = fields(bytes(payload));
    const meta = list.find((f) => f.number === 1);
    const body: JsonObject = { apiVersion: apiVersion ? text(apiVersion) : 'v1', kind: kindName, metadata: meta ? objectMeta(bytes(meta)) : {} };
    for (const [k, v] of Object.entries(decoder(list))) if (v !== undefined) body[k] = v;
    return body;
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw unsupported((err as Error).message);
  }
}
