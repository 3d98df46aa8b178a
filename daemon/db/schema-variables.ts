/** Row types of project secret variables (migration 0010_variables.sql is the source of truth). */

/** A row of `ci_variables`. */
export interface CiVariableRow {
  id: number;
  projectId: number;
  key: string;
  /** The value sealed with Secrets.seal(); open it with Secrets.open(). */
  value: string;
  createdAt: string;
  updatedAt: string;
}
