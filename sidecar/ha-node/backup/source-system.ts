/**
 * A standby cluster that both restores from a repository and streams from a host must get both
 * from the same cluster: a backup of another database system would restore, replay the archive,
 * and never stream (PostgreSQL refuses a source whose system identifier differs), following the
 * wrong cluster without a word. The identifiers are compared before anything is restored.
 */
import type { Logger } from '../../../lib/log.js';
import type { PostgresInstance } from '../postgres/instance.js';
import { streamingSourceSystem, type StreamingAddress } from '../postgres/source-identity.js';
import type { StanzaInfo } from './info.js';

/** Why the backup chosen from the stanza cannot seed a standby of the streaming source (undefined: it can); pure. */
export function sourceSystemProblem(info: StanzaInfo, label: string | undefined, address: StreamingAddress, streamingSystem: string): string | undefined {
  const backup = info.backups.find((b) => b.label === label);
  if (!backup?.systemIdentifier || backup.systemIdentifier === streamingSystem) return undefined;
  return (
    `standby_cluster.host: the streaming source ${address.host}:${address.port} is database system ${streamingSystem}, ` +
    `but backup ${backup.label} in the source stanza ${info.stanza} is of system ${backup.systemIdentifier}: ` +
    'the repository and the streaming source are different clusters; nothing was restored'
  );
}

/**
 * The problem, when the streaming source answers with another system. A source that cannot be
 * reached is no refusal (the repository is there for a source that is down); it is logged.
 */
export async function streamingSourceProblem(
  pg: PostgresInstance,
  address: StreamingAddress,
  info: StanzaInfo,
  label: string | undefined,
  logger: Logger,
): Promise<string | undefined> {
  const answer = await streamingSourceSystem(pg, address);
  if ('error' in answer) {
    logger.warn(
      { source: `${address.host}:${address.port}`, err: answer.error },
      "cannot read the streaming source's system identifier; restoring from the repository without comparing it",
    );
    return undefined;
  }
  return sourceSystemProblem(info, label, address, answer.systemIdentifier);
}
