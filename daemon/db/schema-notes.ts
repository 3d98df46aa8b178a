/**
 * Row types of the repository API tables: commit comments and tag releases (migration 0007_commit_notes.sql is the
 * source of truth).
 */

/** A row of `commit_notes`. */
export interface CommitNoteRow {
  id: number;
  projectId: number;
  /** The full sha of the commented commit. */
  commitSha: string;
  note: string;
  path: string | null;
  line: number | null;
  lineType: 'new' | 'old' | null;
  authorId: number | null;
  createdAt: string;
  updatedAt: string;
}

/** A row of `releases`. */
export interface ReleaseRow {
  id: number;
  projectId: number;
  tagName: string;
  description: string;
  createdAt: string;
  updatedAt: string;
}
