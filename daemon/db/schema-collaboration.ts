/**
 * Row types (the camelCase shape the converters of db/rows.ts return) of the collaboration tables: issues, labels,
 * milestones, notes, award emoji, subscriptions and todos (migration 0012_collaboration.sql is the source of truth).
 * Polymorphic targets are (type, id) pairs.
 */

/** Target types of label links, notes, award emoji, subscriptions and todos. */
export type NoteableType = 'Issue' | 'MergeRequest' | 'Snippet';
export type AwardableType = 'Issue' | 'MergeRequest' | 'Note' | 'Snippet';
export type SubscribableType = 'Issue' | 'MergeRequest' | 'Label';
export type TodoTargetType = 'Issue' | 'MergeRequest';
export type TodoAction = 'assigned' | 'mentioned' | 'build_failed' | 'marked' | 'approval_required';

/** A row of `milestones`. */
export interface MilestoneRow {
  id: number;
  projectId: number;
  iid: number;
  title: string;
  description: string;
  state: 'active' | 'closed';
  dueDate: string | null;
  startDate: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A row of `labels`. */
export interface LabelRow {
  id: number;
  projectId: number;
  title: string;
  color: string;
  description: string | null;
  template: boolean;
  createdAt: string;
  updatedAt: string;
}

/** A row of `issues`. */
export interface IssueRow {
  id: number;
  projectId: number;
  iid: number;
  title: string;
  description: string | null;
  state: 'opened' | 'closed';
  confidential: boolean;
  authorId: number | null;
  assigneeId: number | null;
  milestoneId: number | null;
  dueDate: string | null;
  movedToId: number | null;
  updatedById: number | null;
  closedAt: string | null;
  deletedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A row of `label_links`. */
export interface LabelLinkRow {
  id: number;
  labelId: number;
  targetType: string;
  targetId: number;
  createdAt: string;
}

/** A row of `notes`. */
export interface NoteRow {
  id: number;
  projectId: number;
  noteableType: NoteableType;
  noteableId: number;
  note: string;
  authorId: number | null;
  system: boolean;
  attachment: string | null;
  updatedById: number | null;
  createdAt: string;
  updatedAt: string;
}

/** A row of `award_emoji`. */
export interface AwardEmojiRow {
  id: number;
  name: string;
  userId: number;
  awardableType: AwardableType;
  awardableId: number;
  createdAt: string;
  updatedAt: string;
}

/** A row of `subscriptions`. */
export interface SubscriptionRow {
  id: number;
  userId: number;
  subscribableType: SubscribableType;
  subscribableId: number;
  subscribed: boolean;
  createdAt: string;
  updatedAt: string;
}

/** A row of `todos`. */
export interface TodoRow {
  id: number;
  userId: number;
  projectId: number;
  authorId: number | null;
  targetType: TodoTargetType;
  targetId: number;
  action: TodoAction;
  state: 'pending' | 'done';
  noteId: number | null;
  commitId: string | null;
  createdAt: string;
  updatedAt: string;
}
