import { hbaLineProblem, quoteLine, sslOn } from '../../../api/postgres/pg-hba.js';
import type { ConfigProblem } from './config-problem.js';

/**
 * db.pg_hba lines of a PATCH /config body, checked line by line (api/postgres/pg-hba.ts) so the 400 names
 * the line PostgreSQL would refuse instead of a reload that silently keeps the old rules. hostssl
 * lines need ssl = on among the document's parameters.
 */
export function hbaConfigProblems(lines: readonly string[], parameters: unknown): ConfigProblem[] {
  const context = { ssl: sslOn(parameters && typeof parameters === 'object' ? (parameters as Record<string, unknown>) : undefined) };
  const problems: ConfigProblem[] = [];
  lines.forEach((line, index) => {
    const problem = hbaLineProblem(line, context);
    if (problem) problems.push({ field: `db.pg_hba[${index}]`, message: `${quoteLine(line)} ${problem}` });
  });
  return problems;
}
