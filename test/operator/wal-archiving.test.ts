import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { walArchivingVerdict } from '../../operator/reconcile/wal-archiving.js';

describe('condition WalArchiving', () => {
  it('turns False when segments wait longer than three archiveTimeouts (at least a minute), naming the count and the age', () => {
    const verdict = walArchivingVerdict(
      { stanzaReady: true, archive: { ok: true, message: 'ok', at: '' }, archivePending: { segments: 12, oldestAgeSeconds: 200 } },
      60,
    );
    assert.equal(verdict?.status, 'False');
    assert.equal(verdict?.reason, 'WalPilingUp');
    assert.match(verdict!.message, /^12 WAL segment\(s\) wait for the archiver, the oldest for 200 s/);
    assert.equal(
      walArchivingVerdict({ stanzaReady: true, archivePending: { segments: 12, oldestAgeSeconds: 170 } }, 60)?.status,
      'True',
      'within three archiveTimeouts',
    );
    assert.equal(walArchivingVerdict({ stanzaReady: true, archivePending: { segments: 2, oldestAgeSeconds: 70 } }, 5)?.status, 'False', 'a minute at least');
    assert.equal(walArchivingVerdict({ stanzaReady: true, archivePending: { segments: 2, oldestAgeSeconds: 50 } }, 5)?.status, 'True');
  });

  it('says a failing archive check, and Unknown or nothing when nothing was reported', () => {
    assert.deepEqual(
      walArchivingVerdict(
        { stanzaReady: false, archive: { ok: false, message: 'repository unreachable', at: '' }, archivePending: { segments: 0, oldestAgeSeconds: 0 } },
        60,
      ),
      { status: 'False', reason: 'ArchiveCheckFailing', message: 'repository unreachable' },
    );
    assert.equal(walArchivingVerdict({ stanzaReady: true }, 60)?.status, 'Unknown');
    assert.equal(walArchivingVerdict(undefined, 60), undefined);
    assert.equal(walArchivingVerdict({ stanzaReady: true, archivePending: { segments: 0, oldestAgeSeconds: 0 } }, 60)?.reason, 'Archiving');
  });
});
