import type { Socket } from 'node:net';
import pg from 'pg';

/**
 * Single statements outside transactions run over a few pipelined connections (pg's `pipeline`
 * client option: a query is written at once, without waiting for the previous one's answer), and
 * each connection's socket is corked until the end of the event-loop turn. The queries that many
 * requests issue during one turn then leave in one write, and their answers usually arrive in one
 * read, instead of one write, one read and one pool checkout per query. Every query is still its
 * own Parse/Bind/Execute/Sync with its own result and error; nothing is shared or cached (ADR 0207).
 */
export interface Pipeline {
  query: pg.Pool['query'];
  end(): Promise<void>;
}

interface Lane {
  client?: pg.Client;
  connecting?: Promise<pg.Client>;
  inFlight: number;
  corked: boolean;
}

type Callback = (error: Error | null, result?: pg.QueryResult) => void;

export function createPipeline(config: pg.ClientConfig, size: number): Pipeline {
  const lanes: Lane[] = Array.from({ length: size }, () => ({ inFlight: 0, corked: false }));
  let ended = false;

  const connect = (lane: Lane): Promise<pg.Client> => {
    if (lane.connecting) return lane.connecting;
    const client = new pg.Client({ ...config, pipeline: true } as pg.ClientConfig);
    const drop = (): void => {
      if (lane.client === client) lane.client = undefined;
      if (lane.connecting === connecting) lane.connecting = undefined;
    };
    // A lost connection fails its queries (pg rejects everything in flight); the next query reconnects.
    client.on('error', drop);
    client.on('end', drop);
    const connecting = client.connect().then(
      () => {
        if (lane.connecting === connecting) lane.client = client;
        return client;
      },
      (error: unknown) => {
        drop();
        throw error;
      },
    );
    lane.connecting = connecting;
    return connecting;
  };

  /** Holds the socket's writes until the end of this event-loop turn (setImmediate runs after I/O callbacks). */
  const cork = (lane: Lane, client: pg.Client): void => {
    if (lane.corked) return;
    // pg keeps its socket on the client's connection (not a public API): without it, just no corking.
    const stream = (client as unknown as { connection?: { stream?: Partial<Socket> } }).connection?.stream;
    if (typeof stream?.cork !== 'function' || typeof stream.uncork !== 'function') return;
    lane.corked = true;
    stream.cork();
    setImmediate(() => {
      lane.corked = false;
      stream.uncork!();
    });
  };

  const leastBusy = (): Lane => {
    let best = lanes[0];
    for (const lane of lanes) if (lane.inFlight < best.inFlight) best = lane;
    return best;
  };

  const run = (lane: Lane, client: pg.Client, text: unknown, values: unknown): Promise<pg.QueryResult> => {
    cork(lane, client);
    return (client.query as (t: unknown, v: unknown) => Promise<pg.QueryResult>).call(client, text, values);
  };

  const query = (text: unknown, values?: unknown, callback?: Callback): Promise<pg.QueryResult> | undefined => {
    if (typeof values === 'function') [values, callback] = [undefined, values as Callback];
    const lane = leastBusy();
    lane.inFlight++;
    const client = lane.client;
    const settled = ended
      ? Promise.reject(new Error('pipeline has been ended'))
      : client
        ? run(lane, client, text, values)
        : connect(lane).then((connected) => run(lane, connected, text, values));
    const done = settled.then(
      (result) => {
        lane.inFlight--;
        return result;
      },
      (error: unknown) => {
        lane.inFlight--;
        throw error;
      },
    );
    if (!callback) return done;
    const cb = callback;
    done.then(
      (result) => cb(null, result),
      (error: Error) => cb(error),
    );
    return undefined;
  };

  return {
    query: query as unknown as pg.Pool['query'],
    async end() {
      ended = true;
      await Promise.all(lanes.map(async (lane) => (lane.client ?? (await lane.connecting?.catch(() => undefined)))?.end().catch(() => undefined)));
    },
  };
}
