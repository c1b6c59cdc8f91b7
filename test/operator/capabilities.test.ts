import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1APIGroupList } from '@kubernetes/client-node';
import { apiFallbacks, capabilitiesFrom, choosePdbVersion, servedGroupVersions } from '../../operator/capabilities.js';

function groups(...groupVersions: string[]): V1APIGroupList {
  const byGroup = new Map<string, string[]>();
  for (const gv of groupVersions) {
    const [group] = gv.split('/');
    byGroup.set(group!, [...(byGroup.get(group!) ?? []), gv]);
  }
  return {
    groups: [...byGroup].map(([name, gvs]) => ({
      name,
      versions: gvs.map((groupVersion) => ({ groupVersion, version: groupVersion.split('/')[1]! })),
      preferredVersion: { groupVersion: gvs[0]!, version: gvs[0]!.split('/')[1]! },
    })),
  };
}

describe('server capabilities', () => {
  it('prefer policy/v1 and fall back to policy/v1beta1 (Kubernetes before 1.21)', () => {
    assert.equal(choosePdbVersion(servedGroupVersions(groups('policy/v1', 'policy/v1beta1'))), 'policy/v1');
    assert.equal(choosePdbVersion(servedGroupVersions(groups('policy/v1beta1'))), 'policy/v1beta1');
    assert.equal(choosePdbVersion(servedGroupVersions(groups('apps/v1'))), undefined);
  });

  it('see the ServiceMonitor API only when monitoring.coreos.com/v1 is served', () => {
    assert.deepEqual(capabilitiesFrom(groups('policy/v1', 'monitoring.coreos.com/v1')), { podDisruptionBudget: 'policy/v1', serviceMonitor: true });
    assert.deepEqual(capabilitiesFrom(groups('policy/v1beta1', 'monitoring.coreos.com/v1alpha1')), {
      podDisruptionBudget: 'policy/v1beta1',
      serviceMonitor: false,
    });
  });

  it('explain each fallback, and a missing ServiceMonitor only when one is wanted', () => {
    assert.deepEqual(apiFallbacks({ podDisruptionBudget: 'policy/v1', serviceMonitor: false }, false), []);
    const notes = apiFallbacks({ podDisruptionBudget: 'policy/v1beta1', serviceMonitor: false }, true);
    assert.equal(notes.length, 2);
    assert.match(notes[0]!, /policy\/v1beta1/);
    assert.match(notes[1]!, /ServiceMonitor not created/);
    assert.match(apiFallbacks({ podDisruptionBudget: undefined, serviceMonitor: true }, true)[0]!, /PodDisruptionBudget not created/);
  });
});
