/**
 * The pure half of comparing a standby's repository with its streaming source: pgBackRest's
 * 64-bit system identifiers read exactly, IDENTIFY_SYSTEM's answer, and the refusal message.
 * standby-from-repository.test.ts runs the whole check against real servers.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseInfo } from '../../../../sidecar/ha-node/backup/info.js';
import { sourceSystemProblem } from '../../../../sidecar/ha-node/backup/source-system.js';
import { parseIdentifySystem } from '../../../../sidecar/ha-node/postgres/source-identity.js';

// pgBackRest prints the identifier as a JSON number; real ones are beyond 2^53.
const infoText = `[{"name":"src","status":{"code":0,"message":"ok"},"archive":[],"backup":[{"label":"20260101-100000F","type":"full","database":{"id":1,"repo-key":1},"timestamp":{"start":1767261600,"stop":1767261660}}],"db":[{"id":1,"repo-key":1,"system-id":7312345678901234567,"version":"15"}],"repo":[]}]`;

describe("system identifiers of a standby's two sources", () => {
  it("reads the stanza's 64-bit system identifier without losing digits", () => {
    assert.equal(parseInfo(infoText, 'src').backups[0]!.systemIdentifier, '7312345678901234567');
  });

  it('reads the identifier from IDENTIFY_SYSTEM as psql -At prints it', () => {
    assert.equal(parseIdentifySystem('7312345678901234567|1|0/3000148|'), '7312345678901234567');
    assert.equal(parseIdentifySystem('psql: error: connection refused'), undefined);
  });

  it('refuses a backup of another system, naming both identifiers and the source', () => {
    const info = parseInfo(infoText, 'src');
    const address = { host: '127.0.0.9', port: 5432 };
    assert.equal(sourceSystemProblem(info, '20260101-100000F', address, '7312345678901234567'), undefined);
    assert.equal(
      sourceSystemProblem(info, '20260101-100000F', address, '7399999999999999999'),
      'standby_cluster.host: the streaming source 127.0.0.9:5432 is database system 7399999999999999999, but backup 20260101-100000F in the source stanza src is of system 7312345678901234567: the repository and the streaming source are different clusters; nothing was restored',
    );
  });
});
