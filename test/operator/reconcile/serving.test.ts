import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { notServed, routedTo, type ServedMember } from '../../../operator/reconcile/serving.js';
import { pod } from '../pods.js';

const up = (name: string, role: 'primary' | 'replica', extra: Partial<ServedMember> = {}): ServedMember => ({
  name,
  role,
  state: role === 'primary' ? 'running' : 'streaming',
  podReady: true,
  label: role,
  ...extra,
});

describe('serving: whether the Services route to the members', () => {
  it('a pod is routed to for its role only when Ready and labelled with that role', () => {
    assert.equal(routedTo(pod('demo-0', { role: 'primary' }), 'primary'), true);
    assert.equal(routedTo(pod('demo-0', { role: 'primary', ready: false }), 'primary'), false, 'not Ready: no endpoint');
    assert.equal(routedTo(pod('demo-0', { role: 'replica' }), 'primary'), false, 'the Lease names it primary, the label does not yet: -rw has no endpoint');
    assert.equal(routedTo(pod('demo-0'), 'unknown'), false);
    const leaving = pod('demo-1', { role: 'replica' });
    leaving.metadata!.deletionTimestamp = new Date();
    assert.equal(routedTo(leaving, 'replica'), false, 'a terminating pod leaves the Endpoints');
  });

  it('nothing missing when every wanted member is served', () => {
    assert.equal(notServed([up('demo-0', 'primary'), up('demo-1', 'replica')], 2, 'demo-0', 'demo'), undefined);
  });

  it('members up by ha-node but a pod not Ready yet: PodsNotReady, naming the pod and the Service', () => {
    const gap = notServed([up('demo-0', 'primary', { podReady: false }), up('demo-1', 'replica')], 2, 'demo-0', 'demo');
    assert.equal(gap?.reason, 'PodsNotReady');
    assert.match(gap!.message, /^1\/2 instances ready, primary demo-0: demo-0 running but the pod is not Ready yet, so demo-rw does not route/);
  });

  it('every pod Ready but the new primary still labelled replica: RoleLabelPending', () => {
    const gap = notServed([up('demo-0', 'primary', { label: 'replica' }), up('demo-1', 'replica', { label: 'primary' })], 2, 'demo-0', 'demo');
    assert.equal(gap?.reason, 'RoleLabelPending');
    assert.match(gap!.message, /demo-0 is primary but labelled replica; demo-1 is replica but labelled primary \(demo-ro\/demo-rw follows the label\)/);
  });

  it("every pod served but -rw's endpoints not listing the primary yet (read while not Ready): EndpointsPending", () => {
    const members = [up('demo-0', 'primary', { podIP: '127.0.41.10' }), up('demo-1', 'replica', { podIP: '127.0.41.11' })];
    const gap = notServed(members, 2, 'demo-0', 'demo', ['127.0.41.11']);
    assert.equal(gap?.reason, 'EndpointsPending');
    assert.match(gap!.message, /^2\/2 instances ready, primary demo-0: demo-rw's endpoints do not list demo-0 \(127\.0\.41\.10\) yet/);
    assert.equal(notServed(members, 2, 'demo-0', 'demo', ['127.0.41.10']), undefined, 'listed: served');
    assert.equal(notServed(members, 2, 'demo-0', 'demo'), undefined, 'not read (the cluster was Ready): the pods decide');
  });

  it('a member down by ha-node and not Ready, or one missing: InstancesNotReady; no primary: NoPrimary', () => {
    assert.equal(
      notServed([up('demo-0', 'primary'), up('demo-1', 'replica', { podReady: false, state: 'starting' })], 2, 'demo-0', 'demo')?.reason,
      'InstancesNotReady',
    );
    assert.equal(
      notServed([up('demo-0', 'primary'), up('demo-1', 'replica', { podReady: false, state: undefined })], 2, 'demo-0', 'demo')?.reason,
      'InstancesNotReady',
      'no word from ha-node: not judged up',
    );
    assert.equal(notServed([up('demo-0', 'primary')], 2, 'demo-0', 'demo')?.reason, 'InstancesNotReady');
    assert.deepEqual(notServed([up('demo-1', 'replica')], 1, undefined, 'demo'), { reason: 'NoPrimary', message: '1/1 instances ready' });
  });
});
