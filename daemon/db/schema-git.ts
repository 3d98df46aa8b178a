/** Row types of the git hosting tables (migration 0004_git.sql is the source of truth). */

/** A protected_branches row. */
export interface ProtectedBranchRow {
  id: number;
  projectId: number;
  /** A branch name or a `*` pattern. */
  name: string;
  developersCanPush: boolean;
  developersCanMerge: boolean;
  createdAt: string;
  updatedAt: string;
}
