import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chownSync, mkdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { postgresRunAs } from '../../support/postgres.js';
import { startCluster, type TestCluster } from './harness.js';

/**
 * A replica whose data volume is full (a 96 MiB tmpfs filled with a ballast file) says so in its
 * node document and metrics, and is never promoted when the primary dies; once space is freed it
 * is (so it was the disk that held it back).
 */
const ttl = 6;
const mi = 1024 * 1024;

describe('ha-node: a replica with a full volume', { skip: process.getuid?.() !== 0 && 'mounting a volume needs root', timeout: 240_000 }, () => {
  let cluster: TestCluster;
  let volume: string;

  before(async () => {
    cluster = await startCluster({ members: 2, ttl, loopWait: 1, retryTimeout: 2, scope: 'fulldisk', autoStart: false });
    const replica = cluster.members[1]!;
    volume = join(replica.baseDir, 'data');
    mkdirSync(volume, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${96 * mi},mode=0700`, 'keelson-test', volume]);
    const runAs = await postgresRunAs();
    if (runAs) chownSync(volume, runAs.uid, runAs.gid);
  });

  after(async () => {
    // The replica stops while its volume is attached: the harness finds its postmaster by the pid
    // file on that volume, and a detached one would leave PostgreSQL running without its folder.
    const replica = cluster?.members[1];
    await replica?.stop();
    const pid = replica?.postmasterPid();
    try {
      if (pid) process.kill(pid, 'SIGKILL');
    } catch {
      // it ended meanwhile
    }
    // Detached then (lazily: a process may still hold it), so the harness can remove the folder.
    if (volume) execFileSync('umount', ['-l', volume]);
    await cluster?.stop();
  });

  it('reports the full volume, declines the race when the primary dies, and is promoted once space is freed', async () => {
    const [primary, replica] = cluster.members as [NonNullable<TestCluster['members'][0]>, NonNullable<TestCluster['members'][0]>];
    primary.start();
    await cluster.waitFor('a primary', () => cluster.primary(), 120_000);
    replica.start();
    await cluster.waitFor('the replica streaming', async () => (await replica.status('/replica?replication_state=streaming')) === 200, 120_000);

    const healthy = (await replica.get('/ha')).json();
    assert.equal(healthy.disk_full, undefined);
    assert.equal((healthy.volumes as Array<{ volume: string; capacity_bytes: number }>)[0]?.capacity_bytes, 96 * mi);

    const ballast = join(volume, 'ballast');
    const free = statfsSync(volume).bavail * statfsSync(volume).bsize;
    writeFileSync(ballast, Buffer.alloc(free - 2 * mi));
    const doc = await cluster.waitFor(
      'the node document to say the disk is full',
      async () => {
        const body = (await replica.get('/ha')).json();
        return body.disk_full === true ? body : undefined;
      },
      30_000,
    );
    assert.match((doc.disk_warnings as string[])[0]!, /^data volume \d+% used .*: full, PostgreSQL cannot write; grow the volume$/);
    assert.match((await replica.get('/metrics')).body, /^ha_volume_full\{scope="fulldisk",name="fulldisk-1",volume="data"\} 1$/m);
    const member = await cluster.waitFor(
      'the member record to carry the full volume',
      async () => {
        const members = (await primary.get('/cluster')).json().members as Array<{ name: string; volumes?: Array<{ full?: boolean }> }>;
        return members.find((m) => m.name === replica.name && m.volumes?.[0]?.full === true);
      },
      30_000,
    );
    assert.ok(member);

    primary.killPod();
    await cluster.waitFor(
      'the replica to decline the race for its full volume',
      async () => /a replica with a full volume does not take the lock/.test(replica.log()),
      ttl * 1000 + 30_000,
    );
    assert.equal(await replica.isWritable(), false);
    assert.notEqual(await cluster.leaderName(), replica.name);

    rmSync(ballast);
    await cluster.waitFor('the replica promoted once space is free', async () => (await replica.status('/primary')) === 200, 60_000);
  });
});
