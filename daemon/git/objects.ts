/** Git object shapes (commit, tree, tag) and their parsers from raw object content. */

/** The all-zero object id: "no object" in ref updates (a created or deleted ref). */
export const ZERO_SHA = '0000000000000000000000000000000000000000';
/** The id of the empty tree (SHA-1 repositories). */
export const EMPTY_TREE_SHA = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** Whether a string is a full object id (40 hex digits, or 64 for SHA-256 repositories). */
export const isFullSha = (s: string) => /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(s);
/** Whether an object id is the zero id. */
export const isZeroSha = (s: string | null | undefined) => !s || /^0+$/.test(s);

/** Author or committer of a commit, tagger of a tag. */
export interface Signature {
  name: string;
  email: string;
  /** The instant. */
  date: Date;
  /** The author's UTC offset as git stores it, e.g. `+0200`. */
  timezone: string;
}

/** A parsed commit object. */
export interface CommitInfo {
  sha: string;
  tree: string;
  /** Parent ids, first parent first. */
  parents: string[];
  author: Signature;
  committer: Signature;
  /** The full message (title, blank line, body), as stored. */
  message: string;
}

/** Object types that appear in trees. */
export type TreeEntryType = 'blob' | 'tree' | 'commit';

/** One entry of a tree. */
export interface TreeEntry {
  name: string;
  /** Path from the repository root. */
  path: string;
  type: TreeEntryType;
  /** Octal mode padded to 6 digits: `100644`, `100755`, `120000`, `040000`, `160000`. */
  mode: string;
  sha: string;
}

/** A parsed annotated tag object. */
export interface TagObject {
  sha: string;
  /** The object the tag points to. */
  object: string;
  type: string;
  name: string;
  tagger: Signature | null;
  message: string;
}

/** Parse `Name <email> 1473245000 +0200`. */
export function parseSignature(text: string): Signature {
  const m = /^(.*?) ?<([^>]*)> (-?\d+) ([+-]\d{4})$/.exec(text.trim());
  if (!m) return { name: text.trim(), email: '', date: new Date(0), timezone: '+0000' };
  return { name: m[1]!, email: m[2]!, date: new Date(Number(m[3]) * 1000), timezone: m[4]! };
}

/** A signature as git writes it (for commit-tree environment and tag objects). */
export function formatSignature(sig: Signature): string {
  return `${sig.name} <${sig.email}> ${Math.floor(sig.date.getTime() / 1000)} ${sig.timezone}`;
}

function offsetMinutes(tz: string): number {
  const m = /^([+-])(\d{2})(\d{2})$/.exec(tz);
  if (!m) return 0;
  const v = Number(m[2]) * 60 + Number(m[3]);
  return m[1] === '-' ? -v : v;
}

/** The local time of a signature as ISO 8601 with milliseconds and its offset: `2016-09-07T12:03:20.000+02:00`. */
export function isoDate(sig: Pick<Signature, 'date' | 'timezone'>): string {
  const off = offsetMinutes(sig.timezone);
  const local = new Date(sig.date.getTime() + off * 60_000).toISOString().slice(0, 23);
  const sign = off < 0 ? '-' : '+';
  const abs = Math.abs(off);
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** The UTC offset (`+0200`) of this machine at a given instant, for new signatures. */
export function localTimezone(date: Date): string {
  const off = -date.getTimezoneOffset();
  const abs = Math.abs(off);
  return `${off < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
}

/** The first line of a message (GitLab's `title`). */
export const messageTitle = (message: string) => message.split('\n', 1)[0] ?? '';

/** Split an object into header lines (continuations folded in) and the message after the first blank line. */
function splitHeaders(content: Buffer): { headers: [string, string][]; message: string } {
  const text = content.toString('utf8');
  const end = text.indexOf('\n\n');
  const head = end < 0 ? text : text.slice(0, end);
  const message = end < 0 ? '' : text.slice(end + 2);
  const headers: [string, string][] = [];
  for (const line of head.split('\n')) {
    if (line.startsWith(' ') && headers.length) {
      headers[headers.length - 1]![1] += `\n${line.slice(1)}`;
      continue;
    }
    const sp = line.indexOf(' ');
    headers.push(sp < 0 ? [line, ''] : [line.slice(0, sp), line.slice(sp + 1)]);
  }
  return { headers, message };
}

/** Parse a commit object's content. */
export function parseCommit(sha: string, content: Buffer): CommitInfo {
  const { headers, message } = splitHeaders(content);
  const get = (k: string) => headers.find(([h]) => h === k)?.[1] ?? '';
  return {
    sha,
    tree: get('tree'),
    parents: headers.filter(([h]) => h === 'parent').map(([, v]) => v),
    author: parseSignature(get('author')),
    committer: parseSignature(get('committer')),
    message,
  };
}

/** Parse an annotated tag object's content. */
export function parseTag(sha: string, content: Buffer): TagObject {
  const { headers, message } = splitHeaders(content);
  const get = (k: string) => headers.find(([h]) => h === k)?.[1];
  const tagger = get('tagger');
  // A signed tag carries its signature after the message; it is not part of what people wrote.
  const sig = message.indexOf('-----BEGIN PGP SIGNATURE-----');
  return {
    sha, object: get('object') ?? '', type: get('type') ?? '', name: get('tag') ?? '',
    tagger: tagger ? parseSignature(tagger) : null,
    message: sig >= 0 ? message.slice(0, sig) : message,
  };
}

/** Parse a binary tree object; `dir` is the tree's own path ('' for the root). */
export function parseTree(content: Buffer, dir: string, shaLength = 40): TreeEntry[] {
  const raw = shaLength / 2;
  const entries: TreeEntry[] = [];
  let i = 0;
  while (i < content.length) {
    const sp = content.indexOf(0x20, i);
    const nul = content.indexOf(0, sp);
    if (sp < 0 || nul < 0) break;
    const mode = content.toString('latin1', i, sp).padStart(6, '0');
    const name = content.toString('utf8', sp + 1, nul);
    const sha = content.toString('hex', nul + 1, nul + 1 + raw);
    i = nul + 1 + raw;
    const type: TreeEntryType = mode === '040000' ? 'tree' : mode === '160000' ? 'commit' : 'blob';
    entries.push({ name, path: dir ? `${dir}/${name}` : name, type, mode, sha });
  }
  return entries;
}
