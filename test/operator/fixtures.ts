import { parseDatabaseCluster } from '../../api/crd/validate.js';
import type { DatabaseCluster } from '../../api/crd/types.js';
import type { BuildContext } from '../../operator/builders/index.js';

/** A parsed DatabaseCluster as the API server would hand it over, with spec overrides. */
export function sampleCluster(spec: Record<string, unknown> = {}, name = 'demo', namespace = 'db'): DatabaseCluster {
  return parseDatabaseCluster({
    apiVersion: 'keelson.io/v1',
    kind: 'DatabaseCluster',
    metadata: { name, namespace, uid: '5f1c2a9e-0000-4000-8000-000000000001', generation: 1 },
    spec,
  });
}

export function sampleContext(spec: Record<string, unknown> = {}): BuildContext {
  return { cluster: sampleCluster(spec), operatorVersion: '9.9.9' };
}
