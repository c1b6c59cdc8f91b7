import { hbaLineProblem, quoteLine, sslOff, sslOn } from '../../../api/postgres/pg-hba.js';
import type { ConfigProblem } from './config-problem.js';

/**
 * db.pg_hba lines of a PATCH /config body, checked line by line (api/postgres/pg-hba.ts) so the 400 names
 * the line PostgreSQL would refuse instead of a reload that silently keeps the old rules. hostssl
 * lines need ssl = on among the document's parameters, or a member that serves TLS itself. On
 * such a member (`requireTls`), unless the document turns ssl off, lines are held to the same TLS
 * policy as the DatabaseCluster's spec: no hostnossl or hostgssenc line that admits a client, no
 * trust for a remote address.
 */
export function hbaConfigProblems(lines: readonly string[], parameters: unknown, requireTls = false): ConfigProblem[] {
  const map = parameters && typeof parameters === 'object' ? (parameters as Record<string, unknown>) : undefined;
  const tls = requireTls && !sslOff(map);
  const context = { ssl: sslOn(map) || tls, requireTls: tls };
  const problems: ConfigProblem[] = [];
  lines.forEach((line, index) => {
    const problem = hbaLineProblem(line, context);
    if (problem) problems.push({ field: `db.pg_hba[${index}]`, message: `${quoteLine(line)} ${problem}` });
  });
  return problems;
}
