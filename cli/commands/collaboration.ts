/**
 * What the issue, label, milestone and todo nouns share: the API shapes the CLI shows, and resolving what people type
 * (an issue's #iid, a milestone's title or #iid, a username, a project path) to the ids the API v3 wants.
 */
import type { ApiClient } from '../client.js';
import { CliError, UsageError } from '../errors.js';
import { shortTime } from '../output.js';
import { idOrPath } from './common.js';

/** A user as embedded in issues, notes and todos. */
export interface UserRef {
  id: number;
  username: string;
  name: string;
}

/** A milestone as the API shows it. */
export interface Milestone {
  id: number;
  iid: number;
  project_id: number;
  title: string;
  description: string;
  state: string;
  due_date: string | null;
  created_at: string;
  updated_at: string;
}

/** An issue as the API shows it (the fields the CLI prints; --json prints everything). */
export interface Issue {
  id: number;
  iid: number;
  project_id: number;
  title: string;
  description: string | null;
  state: string;
  labels: string[];
  milestone: Milestone | null;
  assignee: UserRef | null;
  author: UserRef | null;
  subscribed: boolean;
  user_notes_count: number;
  upvotes: number;
  downvotes: number;
  due_date: string | null;
  confidential?: boolean;
  web_url?: string;
  created_at: string;
  updated_at: string;
}

/** A note (comment or system note). */
export interface Note {
  id: number;
  body: string;
  author: UserRef | null;
  system: boolean;
  created_at: string;
  upvotes?: number;
  downvotes?: number;
}

/** An award emoji. */
export interface AwardEmoji {
  id: number;
  name: string;
  user: UserRef;
}

/** A label as the API lists it. */
export interface Label {
  /** Gantry's addition to 8.13's Label entity: what system notes refer to (`~12`). */
  id?: number;
  name: string;
  color: string;
  description: string | null;
  open_issues_count?: number;
  closed_issues_count?: number;
  open_merge_requests_count?: number;
  subscribed?: boolean;
}

/** A todo. */
export interface Todo {
  id: number;
  project: { id: number; path_with_namespace: string };
  author: UserRef | null;
  action_name: string;
  target_type: string;
  target: { id: number; iid: number; title: string; state: string };
  target_url: string;
  body: string;
  state: string;
  created_at: string;
}

/** `#12` or `12` -> 12; anything else is a usage error naming `what`. */
export function parseIid(value: string, what = 'issue'): number {
  const m = /^#?(\d+)$/.exec(value.trim());
  if (!m || Number(m[1]) < 1) throw new UsageError(`${what} must be its number (like 12 or #12), not "${value}"`);
  return Number(m[1]);
}

/** The issues path of a project. */
export const issuesPath = (project: string) => `/projects/${idOrPath(project)}/issues`;

/** A label reference as GitLab writes one by name: `~bug`, or `~"two words"` when the name needs quotes. */
export const labelNameReference = (name: string) => (/^[A-Za-z0-9_\-?&.]+$/.test(name) && !/^\d+$/.test(name) ? `~${name}` : `~"${name}"`);

/** A label reference by id in a system note: `~12` after the start, a space or an opening bracket, ended by a word end. */
const LABEL_ID_REFERENCE = /(^|[\s(])~(\d+)(?![\w"])/g;

/** Whether any system note refers to a label by id. */
export const notesReferToLabels = (notes: Note[]) => notes.some((n) => n.system && new RegExp(LABEL_ID_REFERENCE.source).test(n.body));

/**
 * System notes as a reader wants them: 8.13 stores label changes by id ("Added ~2 label", `to_reference(format: :id)`),
 * and the API answers that text; the CLI shows the labels' names instead ("Added ~bug label"). References to labels
 * that are gone stay as they are. Other notes are untouched (a `~2` a person typed is theirs).
 */
export function withLabelNames(notes: Note[], labels: Label[]): Note[] {
  const names = new Map<number, string>();
  for (const l of labels) if (typeof l.id === 'number') names.set(l.id, l.name);
  return notes.map((n) => (n.system ? {
    ...n,
    body: n.body.replace(LABEL_ID_REFERENCE, (whole, before: string, id: string) => {
      const name = names.get(Number(id));
      return name === undefined ? whole : `${before}${labelNameReference(name)}`;
    }),
  } : n));
}

/** Indent every line of a text block. */
const indent = (text: string, by = '  ') => text.split('\n').map((l) => (l ? `${by}${l}` : l)).join('\n');

/** The "Notes (n):" section of `gantry issue show` and `gantry mr show`: author, time, whether a system note, votes, text. */
export function renderNotes(notes: Note[]): string {
  const parts = [notes.length ? `Notes (${notes.length}):` : 'No notes.'];
  for (const n of notes) {
    const votes = n.upvotes || n.downvotes ? ` · +${n.upvotes ?? 0} -${n.downvotes ?? 0}` : '';
    parts.push('', `${at(n.author) || '(deleted user)'} · ${shortTime(n.created_at)}${n.system ? ' · system' : ''}${votes}`, indent(n.body));
  }
  return parts.join('\n');
}

/** The notes of an issue or merge request with label ids in system notes shown as names (one request for the labels, when needed). */
export async function notesForReading(api: ApiClient, project: string, notes: Note[]): Promise<Note[]> {
  if (!notesReferToLabels(notes)) return notes;
  const labels = await api.list<Label>(`/projects/${idOrPath(project)}/labels`, {}, { all: true });
  return withLabelNames(notes, labels.items);
}

/** The issue `#iid` of a project (the API v3 addresses issues by their global id; people know the iid). */
export async function findIssue(api: ApiClient, project: string, iidText: string): Promise<Issue> {
  const iid = parseIid(iidText);
  const found = await api.get<Issue[]>(issuesPath(project), { iid });
  const issue = found.find((i) => i.iid === iid);
  if (!issue) throw new CliError(`no issue #${iid} in ${project}`, `list them with \`gantry issue list ${project}\``);
  return issue;
}

/** A user id from an id or a username (with or without @); `none` (or 0) means nobody (0, as the API clears with). */
export async function userId(api: ApiClient, value: string): Promise<number> {
  const v = value.trim().replace(/^@/, '');
  if (v === 'none' || v === '0') return 0;
  if (/^\d+$/.test(v)) return Number(v);
  const found = await api.get<UserRef[]>('/users', { username: v });
  const user = found.find((u) => u.username.toLowerCase() === v.toLowerCase());
  if (!user) throw new CliError(`no user "${v}"`, 'check the username (`gantry user list --search <text>`)');
  return user.id;
}

/** The milestone of a project named by its title, or by its number (`3` or `%3`, the iid). */
export async function findMilestone(api: ApiClient, project: string, value: string): Promise<Milestone> {
  const path = `/projects/${idOrPath(project)}/milestones`;
  const all = (await api.list<Milestone>(path, {}, { all: true })).items;
  const byTitle = all.find((m) => m.title === value);
  if (byTitle) return byTitle;
  const n = /^%?(\d+)$/.exec(value.trim());
  const byIid = n ? all.find((m) => m.iid === Number(n[1])) : undefined;
  if (byIid) return byIid;
  throw new CliError(`no milestone "${value}" in ${project}`, `list them with \`gantry milestone list ${project}\``);
}

/** A milestone id for --milestone: `none` clears it (0). */
export async function milestoneId(api: ApiClient, project: string, value: string): Promise<number> {
  if (value.trim() === 'none') return 0;
  return (await findMilestone(api, project, value)).id;
}

/** A project's numeric id from an id or a namespace/path. */
export async function projectId(api: ApiClient, value: string): Promise<number> {
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  return (await api.get<{ id: number }>(`/projects/${idOrPath(value)}`)).id;
}

/** `namespace/project` of an issue or todo target from its web URL (`.../ns/proj/issues/3`), for tables. */
export function projectPathOf(webUrl: string | undefined): string {
  if (!webUrl) return '';
  try {
    return new URL(webUrl).pathname.replace(/^\/+/, '').replace(/\/(issues|merge_requests)\/\d+(#.*)?$/, '');
  } catch {
    return '';
  }
}

/** `@username`, or empty. */
export const at = (u: UserRef | null | undefined): string => (u ? `@${u.username}` : '');
