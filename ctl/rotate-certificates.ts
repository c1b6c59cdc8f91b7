import * as k8s from '@kubernetes/client-node';
import { X509Certificate } from 'node:crypto';
import { apiStatusCode, describeApiError, loadKubeConfig } from '../lib/kube/client.js';
import { Ports } from '../lib/ports.js';
import { pemCertificates } from '../lib/tls-certificates.js';
import { group, plural, version } from '../api/crd/types.js';
import type { CertificatesSpec } from '../api/crd/certificates-types.js';
import { parseDatabaseCluster } from '../api/crd/validate.js';
import { BackupTlsKeys, names, rotateCaAnnotation, rotateCertificatesAnnotation, TlsKeys } from '../api/naming.js';
import { OperationError, UnreachableError } from './client.js';
import { CtlExit, load, UsageError, type CtlContext } from './context.js';
import { machine } from './render.js';
import { fetchPoolers } from './poolers.js';
import { servedCertificate } from './served-certificate.js';

/**
 * `rotate-certificates`: asks the operator for new certificates through the cluster's annotations
 * (`keelson.io/rotate-certificates`: a new server and replication certificate; with --ca,
 * `keelson.io/rotate-ca`: a new CA, trusted first, signing once the kubelets have refreshed the
 * Secrets, after which the certificates are re-issued from it), then waits until every member and
 * every pooler serves the new server certificate to a new client. The operator does not rotate
 * certificates a user brings in spec.certificates: those are refused here with the field named.
 */

export interface RotateOptions {
  ca?: boolean;
  timeout?: string;
}

const pollMs = 1000;

/** Why the operator would not rotate this cluster's certificates (undefined: it will). Pure. */
export function rotationRefusal(spec: CertificatesSpec, ca: boolean): string | undefined {
  const theirs = (field: keyof CertificatesSpec) =>
    `spec.certificates.${field} names the user's Secret "${spec[field]}": the operator does not rotate certificates it did not issue; renew them where they are made (cert-manager)`;
  if (spec.serverTLSSecret !== undefined) return theirs('serverTLSSecret');
  if (ca && spec.serverCASecret !== undefined) return theirs('serverCASecret');
  return undefined;
}

const signedBy = (cert: string, ca: string): boolean => {
  try {
    return new X509Certificate(cert).verify(new X509Certificate(ca).publicKey);
  } catch {
    return false;
  }
};

interface Kube {
  core: k8s.CoreV1Api;
  custom: k8s.CustomObjectsApi;
}

async function readSecret(kube: Kube, namespace: string, name: string): Promise<k8s.V1Secret | undefined> {
  try {
    return await kube.core.readNamespacedSecret({ namespace, name });
  } catch (error) {
    if (apiStatusCode(error) === 404) return undefined;
    throw new UnreachableError(`cannot read Secret ${name}: ${describeApiError(error)}`);
  }
}

const decoded = (secret: k8s.V1Secret | undefined, key: string): string | undefined =>
  secret?.data?.[key] ? Buffer.from(secret.data[key], 'base64').toString('utf8') : undefined;

/** Polls `check` until it gives a value; past the deadline, fails with what is still awaited. */
async function until<T>(deadline: number, what: () => string, check: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) throw new OperationError(0, `timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

interface Endpoint {
  name: string;
  host: string;
  port: number;
}

/** Every member's PostgreSQL and every pooler's PgBouncer, as the members report them now. */
async function endpoints(ctx: CtlContext): Promise<Endpoint[]> {
  const { cluster } = await load(ctx);
  const found: Endpoint[] = cluster.members.map((m) => ({ name: m.name, host: m.host ?? '', port: m.port ?? Ports.postgres }));
  for (const pooler of await fetchPoolers(cluster, ctx.client)) {
    if (!pooler.answered) continue;
    const host = new URL(pooler.url).hostname.replace(/^\[|\]$/g, '');
    found.push({ name: `pooler ${host}${pooler.readOnly ? ' (read-only)' : ''}`, host, port: Ports.pooler });
  }
  return found;
}

/** Waits until every endpoint serves `cert` to a new client; prints each as it does. */
async function untilServed(ctx: CtlContext, cert: string, deadline: number, say: (line: string) => void): Promise<string[]> {
  const fingerprint = new X509Certificate(cert).fingerprint256;
  const done = new Set<string>();
  let waiting: string[] = [];
  return until(
    deadline,
    () => `every member to serve the new certificate; still waiting for ${waiting.join('; ')}`,
    async () => {
      waiting = [];
      const all = await endpoints(ctx).catch((error: unknown) => {
        waiting = [`the member list (${(error as Error).message})`];
        return [];
      });
      for (const endpoint of all) {
        const served = endpoint.host
          ? await servedCertificate(ctx.client.route, endpoint.host, endpoint.port, ctx.client.timeoutMs).catch((error: unknown) => error as Error)
          : new Error('publishes no PostgreSQL address');
        if (!(served instanceof Error) && served.fingerprint256 === fingerprint) {
          if (!done.has(endpoint.name)) say(`${endpoint.name} serves the new certificate`);
          done.add(endpoint.name);
        } else waiting.push(`${endpoint.name} (${served instanceof Error ? served.message : `serial ${served.serialNumber}`})`);
      }
      return all.length > 0 && waiting.length === 0 ? all.map((e) => e.name) : undefined;
    },
  );
}

export async function rotateCertificatesCommand(ctx: CtlContext, options: RotateOptions): Promise<number> {
  const { scope, namespace, urls } = ctx.target;
  if (urls.length > 0 || !scope) throw new UsageError('rotate-certificates works on the DatabaseCluster: give --cluster (and --namespace), not --url');
  const timeoutSeconds = Number(options.timeout ?? '600');
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) throw new UsageError('--timeout must be a positive number of seconds');
  const deadline = Date.now() + timeoutSeconds * 1000;
  const say = (line: string) => {
    if (ctx.format === 'table') ctx.out(`${line}\n`);
  };
  const config = loadKubeConfig({ kubeconfig: ctx.target.kubeconfig });
  const kube: Kube = { core: config.makeApiClient(k8s.CoreV1Api), custom: config.makeApiClient(k8s.CustomObjectsApi) };
  let spec: CertificatesSpec;
  try {
    spec = parseDatabaseCluster(await kube.custom.getNamespacedCustomObject({ group, version, namespace, plural, name: scope })).spec.certificates;
  } catch (error) {
    if (apiStatusCode(error) === 404) throw new OperationError(0, `no DatabaseCluster "${scope}" in namespace ${namespace}`);
    throw new UnreachableError(
      `cannot read DatabaseCluster ${scope}: ${error instanceof Error && !apiStatusCode(error) ? error.message : describeApiError(error)}`,
    );
  }
  const refusal = rotationRefusal(spec, options.ca === true);
  if (refusal) throw new OperationError(0, refusal);

  const n = names(scope);
  const request = `ctl-${new Date().toISOString()}`;
  const annotation = options.ca ? rotateCaAnnotation : rotateCertificatesAnnotation;
  const oldCa = options.ca ? pemCertificates(decoded(await readSecret(kube, namespace, n.caSecret), BackupTlsKeys.cert) ?? '')[0] : undefined;
  if (options.ca && !oldCa) throw new OperationError(0, `the operator's CA Secret ${n.caSecret} holds no CA yet: is the operator running?`);
  try {
    await kube.custom.patchNamespacedCustomObject(
      { group, version, namespace, plural, name: scope, body: { metadata: { annotations: { [annotation]: request } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
  } catch (error) {
    throw new OperationError(0, `cannot annotate DatabaseCluster ${scope}: ${describeApiError(error)}`);
  }
  say(`requested ${options.ca ? 'a new cluster CA' : 'new certificates'}: ${annotation}=${request}`);

  let newCert: string;
  if (options.ca) {
    const newCa = await until(
      deadline,
      () => `the operator to stage a new CA in Secret ${n.caSecret} (is the operator running?)`,
      async () => {
        const secret = await readSecret(kube, namespace, n.caSecret);
        if (secret?.metadata?.annotations?.[annotation] !== request) return undefined;
        const signing = pemCertificates(decoded(secret, BackupTlsKeys.cert) ?? '')[0];
        return decoded(secret, BackupTlsKeys.nextCert) ?? (signing && signing.trim() !== oldCa!.trim() ? signing : undefined);
      },
    );
    say(
      `a new CA (serial ${new X509Certificate(newCa).serialNumber}) is trusted; the operator signs with it once every kubelet has the new bundle (its --ca-trust-propagation: 3 minutes by default)`,
    );
    newCert = await until(
      deadline,
      () => `the operator to re-issue ${n.serverTlsSecret} from the new CA`,
      async () => {
        const cert = decoded(await readSecret(kube, namespace, n.serverTlsSecret), TlsKeys.cert);
        return cert && signedBy(cert, newCa) ? cert : undefined;
      },
    );
  } else {
    newCert = await until(
      deadline,
      () => `the operator to re-issue ${n.serverTlsSecret} (is the operator running?)`,
      async () => {
        const secret = await readSecret(kube, namespace, n.serverTlsSecret);
        return secret?.metadata?.annotations?.[annotation] === request ? decoded(secret, TlsKeys.cert) : undefined;
      },
    );
  }
  const serial = new X509Certificate(newCert).serialNumber;
  say(`the operator issued the new server certificate (serial ${serial}); waiting for every member to serve it`);
  const served = await untilServed(ctx, newCert, deadline, say);
  if (ctx.format === 'table') say(`done: ${served.length} served the new certificate`);
  else ctx.out(machine({ request, serial, served }, ctx.format));
  return CtlExit.ok;
}
