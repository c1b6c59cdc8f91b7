/** Cluster IPs come from a 127.x range so the local service proxy can listen on them. */
import { isJsonObject, type KubeObject } from './types.js';

export class ServiceIpAllocator {
  private next = 1;

  constructor(private readonly prefix = '127.1.') {}

  /** Cluster IPs come from a 127.x range so the local service proxy can listen on them. */
  allocate(o: KubeObject, used: Set<unknown>): void {
    const spec = isJsonObject(o.spec) ? o.spec : {};
    if (spec.type === 'ExternalName' || spec.clusterIP === 'None') {
      if (spec.clusterIP === 'None') spec.clusterIPs = ['None'];
      return;
    }
    if (!spec.clusterIP) {
      let ip = '';
      for (let tries = 0; tries < 65000; tries += 1) {
        const n = this.next;
        this.next = (this.next % 65023) + 1;
        ip = `${this.prefix}${Math.floor(n / 254)}.${(n % 254) + 1}`;
        if (!used.has(ip)) break;
      }
      spec.clusterIP = ip;
    }
    spec.clusterIPs = [spec.clusterIP];
    spec.ipFamilies ??= ['IPv4'];
    spec.ipFamilyPolicy ??= 'SingleStack';
  }
}
