import { names } from '../api/naming.js';

/**
 * What `keelson ctl` checks on a member's https API: the CA (--cacert, else the `ca.crt` of
 * `<cluster>-server-tls` read through the kubeconfig, as `query` does) and the name the member's
 * certificate carries, `<member>.<cluster>-headless.<namespace>.svc`, while the address its
 * api_url names is dialled. Names are learnt from the member Leases and every GET /cluster.
 */
export class MemberNames {
  private readonly byHost = new Map<string, string>();
  readonly suffix: string;

  constructor(scope: string, namespace: string) {
    this.suffix = `${names(scope).headlessService}.${namespace}.svc`;
  }

  remember(members: Array<{ name: string; api_url?: string }>): void {
    for (const member of members) {
      if (!member.api_url) continue;
      try {
        this.byHost.set(new URL(member.api_url).hostname.replace(/^\[|\]$/g, ''), member.name);
      } catch {
        // a malformed api_url names no host to check
      }
    }
  }

  /** The name to verify for a member dialled at `host`; undefined when no member there is known. */
  serverName(host: string): string | undefined {
    const member = this.byHost.get(host);
    return member === undefined ? undefined : `${member}.${this.suffix}`;
  }
}

/** A CA bundle given, or one read once when the first https call needs it. */
export type CaSource = string | (() => Promise<string | undefined>);

export function onceCa(read: () => Promise<string | undefined>): CaSource {
  let pending: Promise<string | undefined> | undefined;
  return () => (pending ??= read());
}
