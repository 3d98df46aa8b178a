/** gantry commit list|show|diff: a project's history, one commit, and what it changed. */
import type { Command } from 'commander';
import { noteMorePages, type Factory } from '../client.js';
import { printJson, printList, renderRecord, shortTime, type Column } from '../output.js';
import { connectionFlags, idOrPath, listFlags, listOptions } from './common.js';
import { fileDiff, type Change } from '../views/diff.js';

/** A commit as the commit list sends it. */
export interface Commit {
  id: string;
  short_id: string;
  title: string;
  author_name: string;
  author_email: string;
  created_at: string;
  message: string;
}

/** One commit with details. */
export interface CommitDetail extends Commit {
  committed_date: string;
  authored_date: string;
  parent_ids: string[];
  stats: { additions: number; deletions: number; total: number };
  status: string | null;
}

const COLUMNS: Column<Commit>[] = [
  { header: 'sha', value: (c) => c.short_id },
  { header: 'date', value: (c) => shortTime(c.created_at) },
  { header: 'author', value: (c) => c.author_name, max: 24 },
  { header: 'title', value: (c) => c.title, max: 72 },
];

/** Registers the `commit` noun. */
export function registerCommit(program: Command, factory: Factory): void {
  const { io } = factory;
  const commit = program.command('commit').alias('commits').description('list and show commits of a project');
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  listFlags(commit.command('list').alias('log').description('list commits, newest first'))
    .argument('<project>', 'id or namespace/path')
    .option('--ref <ref>', 'branch, tag or commit (default: the default branch)')
    .option('--since <time>', 'only commits after this ISO 8601 time')
    .option('--until <time>', 'only commits before this ISO 8601 time')
    .option('--path <path>', 'only commits touching this path')
    .action(async (id: string, o: Record<string, string | boolean | number | undefined>, cmd: Command) => {
      const page = await client(cmd).list<Commit>(`/projects/${idOrPath(id)}/repository/commits`, {
        ref_name: o.ref as string | undefined, since: o.since as string | undefined, until: o.until as string | undefined, path: o.path as string | undefined,
      }, listOptions(o));
      printList(io, page.items, COLUMNS, { json: Boolean(o.json), noun: 'commits' });
      noteMorePages(io, page);
    });

  commit
    .command('show')
    .description('show one commit (sha, branch or tag)')
    .argument('<project>', 'id or namespace/path')
    .argument('<sha>', 'commit sha, branch or tag')
    .option('--json', 'print the raw API JSON')
    .action(async (id: string, sha: string, o: { json?: boolean }, cmd: Command) => {
      const c = await client(cmd).get<CommitDetail>(`/projects/${idOrPath(id)}/repository/commits/${encodeURIComponent(sha)}`);
      if (o.json) return printJson(io, c);
      io.out(renderRecord([
        ['commit', c.id],
        ['parents', c.parent_ids.join(' ')],
        ['author', `${c.author_name} <${c.author_email}>`],
        ['authored', c.authored_date],
        ['committed', c.committed_date],
        ['changes', `+${c.stats.additions} -${c.stats.deletions}`],
        ['status', c.status ?? 'none'],
      ]));
      io.out(`\n${c.message.replace(/\n+$/, '').split('\n').map((l) => `    ${l}`.trimEnd()).join('\n')}\n`);
    });

  commit
    .command('diff')
    .description('show what a commit changed, as a unified diff')
    .argument('<project>', 'id or namespace/path')
    .argument('<sha>', 'commit sha, branch or tag')
    .option('--json', 'print the raw API JSON')
    .action(async (id: string, sha: string, o: { json?: boolean }, cmd: Command) => {
      const page = await client(cmd).list<Change>(`/projects/${idOrPath(id)}/repository/commits/${encodeURIComponent(sha)}/diff`, {}, { all: true });
      if (o.json) return printJson(io, page.items);
      if (!page.items.length) io.err('No changes.\n');
      for (const d of page.items) io.out(fileDiff(d));
    });
}
