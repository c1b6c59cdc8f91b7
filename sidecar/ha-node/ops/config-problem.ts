/** One refused field of a dynamic configuration document (the 400 of PATCH /config names each). */
export interface ConfigProblem {
  /** Dotted path of the offending key, e.g. "ttl" or "db.parameters.max_connections". */
  field: string;
  message: string;
}
