import { readFileSync, readdirSync } from 'node:fs';

/**
 * Fencing a PostgreSQL server that no longer answers. A stopped (SIGSTOP) or wedged process can
 * still be killed, and a process with SIGKILL pending never runs user code again, so none of its
 * sessions can acknowledge another commit. Killing the postmaster alone is not enough: its
 * backends live on (and a stopped one would finish a commit once continued).
 */

/** Parent pid and state of one /proc/<pid>/stat line ("pid (comm) state ppid ..."; comm may hold spaces). */
export function parseProcStat(text: string): { state: string; ppid: number } | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const [state, ppid] = text.slice(close + 2).split(' ');
  const parent = Number(ppid);
  return state && Number.isInteger(parent) ? { state, ppid: parent } : undefined;
}

/** Every descendant of root, given each process's parent. */
export function descendantsOf(root: number, parentOf: ReadonlyMap<number, number>): number[] {
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of parentOf) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      if (child === root || found.includes(child)) continue;
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function processTable(): Map<number, { state: string; ppid: number }> {
  const table = new Map<number, { state: string; ppid: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = parseProcStat(readFileSync(`/proc/${entry}/stat`, 'utf8'));
      if (stat) table.set(Number(entry), stat);
    } catch {
      // exited meanwhile
    }
  }
  return table;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

/** Still running: present and not a zombie (a zombie cannot run code; its parent just has not reaped it). */
function running(pid: number): boolean {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.state !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Kills the postmaster and all its descendants: SIGSTOP the postmaster first so it forks nothing
 * new while the tree is read, SIGKILL every descendant, then the postmaster. Waits up to waitMs
 * for them to go; returns the ones still there (a process in uninterruptible disk sleep dies only
 * when its I/O returns, but it never runs user code again).
 */
export async function killServerTree(postmasterPid: number, waitMs = 2000): Promise<{ killed: number[]; lingering: number[] }> {
  signal(postmasterPid, 'SIGSTOP');
  const table = processTable();
  const tree = descendantsOf(postmasterPid, new Map([...table].map(([pid, stat]) => [pid, stat.ppid])));
  for (const pid of tree) signal(pid, 'SIGKILL');
  signal(postmasterPid, 'SIGKILL');
  const all = [postmasterPid, ...tree];
  const deadline = Date.now() + waitMs;
  let lingering = all.filter(running);
  while (lingering.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    lingering = lingering.filter(running);
  }
  return { killed: all, lingering };
}
