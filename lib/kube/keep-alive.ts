import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent, type AgentOptions } from 'node:https';
import * as k8s from '@kubernetes/client-node';

/**
 * Connection reuse for client-node 1.x, which builds a new agent for every request and so pays a
 * TCP and TLS handshake per call. The middleware swaps that agent for a keep-alive one with the
 * same TLS options, one per distinct set of options (a rotated client certificate or CA gets a new
 * one). Agents of another kind (a proxy agent) are left alone.
 */

/** The TLS options that identify where and as whom a connection talks. */
function identityOf(options: AgentOptions): string {
  const text = (value: unknown): string => (value === undefined ? '' : Buffer.isBuffer(value) ? value.toString('base64') : String(value));
  return [options.ca, options.cert, options.key, options.pfx, options.passphrase, options.rejectUnauthorized, options.servername].map(text).join('\u0000');
}

export class SharedAgents {
  private readonly https = new Map<string, HttpsAgent>();
  private http: HttpAgent | undefined;

  /** The keep-alive agent to use instead of `agent`, or `agent` itself when it is not a plain one. */
  instead(agent: HttpAgent | HttpsAgent | undefined): HttpAgent | HttpsAgent | undefined {
    if (agent?.constructor === HttpsAgent) {
      const options = (agent as HttpsAgent).options;
      const key = identityOf(options);
      let shared = this.https.get(key);
      if (!shared) {
        // A certificate rotation leaves the old agent idle: close its sockets rather than keep it.
        for (const old of this.https.values()) old.destroy();
        this.https.clear();
        shared = new HttpsAgent({ ...options, keepAlive: true });
        this.https.set(key, shared);
      }
      return shared;
    }
    if (agent?.constructor === HttpAgent) return (this.http ??= new HttpAgent({ keepAlive: true }));
    return agent;
  }

  /** Middleware for client-node request options. */
  middleware(): k8s.ObservableMiddleware {
    return {
      pre: (context) => {
        const shared = this.instead(context.getAgent());
        if (shared) context.setAgent(shared);
        return new k8s.Observable(Promise.resolve(context));
      },
      post: (response) => new k8s.Observable(Promise.resolve(response)),
    };
  }

  destroy(): void {
    for (const agent of this.https.values()) agent.destroy();
    this.https.clear();
    this.http?.destroy();
    this.http = undefined;
  }
}
