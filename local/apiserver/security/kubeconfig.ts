/** kubeconfig files that kubectl and client-node load unmodified. */
import { stringify } from 'yaml';

export interface KubeconfigInput {
  server: string;
  caCert?: string;
  token?: string;
  clientCert?: string;
  clientKey?: string;
  contextName?: string;
  namespace?: string;
}

const b64 = (text: string): string => Buffer.from(text).toString('base64');

export function renderKubeconfig(input: KubeconfigInput): string {
  const name = input.contextName ?? 'keelson-local';
  const cluster: Record<string, unknown> = { server: input.server };
  if (input.caCert) cluster['certificate-authority-data'] = b64(input.caCert);
  // client-node refuses plain http unless TLS verification is explicitly skipped.
  else cluster['insecure-skip-tls-verify'] = true;
  const user: Record<string, unknown> = {};
  if (input.token) user.token = input.token;
  if (input.clientCert && input.clientKey) {
    user['client-certificate-data'] = b64(input.clientCert);
    user['client-key-data'] = b64(input.clientKey);
  }
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name, user }],
    contexts: [{ name, context: { cluster: name, user: name, ...(input.namespace ? { namespace: input.namespace } : {}) } }],
    'current-context': name,
    preferences: {},
  });
}
