/**
 * Certificates for pgBackRest's TLS server between the members of one cluster: a private CA per
 * cluster (the operator keeps it in a Secret) and member certificates issued from it. openssl runs
 * as a tool (it is in the image through PostgreSQL's ssl-cert dependency); keys pass only through
 * a private temporary folder, never through arguments, logs or error messages.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PemPair {
  cert: string;
  key: string;
}

/** A name openssl's -subj takes as is and pgBackRest compares exactly: a host name or an IP address. */
const commonNamePattern = /^[A-Za-z0-9][A-Za-z0-9.:-]{0,63}$/;

function openssl(args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('openssl', args, { cwd, timeout: 30_000 }, (error, _stdout, stderr) => {
      // stderr of req/x509 holds no key material; the first line says what went wrong.
      if (error) reject(new Error(`openssl ${args[0]} failed: ${String(stderr).split('\n')[0]?.slice(0, 200) || error.message}`));
      else resolve();
    });
  });
}

async function inPrivateFolder<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'keelson-tls-'));
  try {
    return await work(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function checkName(commonName: string): void {
  if (!commonNamePattern.test(commonName)) throw new Error(`certificate name "${commonName.slice(0, 80)}" must be a host name or an IP address`);
}

const keyArgs = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** A self-signed CA (EC P-256). */
export function createCertificateAuthority(commonName: string, days = 3650): Promise<PemPair> {
  checkName(commonName);
  return inPrivateFolder(async (dir) => {
    await openssl(['req', '-x509', ...keyArgs, '-keyout', 'ca.key', '-out', 'ca.crt', '-subj', `/CN=${commonName}`, '-days', String(days), '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
    return { cert: readFileSync(join(dir, 'ca.crt'), 'utf8'), key: readFileSync(join(dir, 'ca.key'), 'utf8') };
  });
}

/**
 * A certificate for `commonName` signed by `ca`, usable by a TLS server and client. No
 * subjectAltName on purpose: pgBackRest 2.45 checks an IP address only against the common name
 * (it ignores IP subjectAltNames, and ignores the common name whenever any subjectAltName exists).
 */
export function issueCertificate(ca: PemPair, commonName: string, days = 825): Promise<PemPair> {
  checkName(commonName);
  return inPrivateFolder(async (dir) => {
    writeFileSync(join(dir, 'ca.crt'), ca.cert);
    writeFileSync(join(dir, 'ca.key'), ca.key, { mode: 0o600 });
    writeFileSync(join(dir, 'ext'), 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\n');
    await openssl(['req', '-new', ...keyArgs, '-keyout', 'member.key', '-out', 'member.csr', '-subj', `/CN=${commonName}`], dir);
    const serial = `0x${randomBytes(16).toString('hex')}`;
    await openssl(['x509', '-req', '-in', 'member.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', serial, '-days', String(days), '-extfile', 'ext', '-out', 'member.crt'], dir);
    return { cert: readFileSync(join(dir, 'member.crt'), 'utf8'), key: readFileSync(join(dir, 'member.key'), 'utf8') };
  });
}
