/** gantry file get|put|delete: read and write single repository files; every write is a commit on a branch. */
import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { ApiClient, Factory } from '../client.js';
import { ApiError } from '../client.js';
import { CliError, UsageError } from '../errors.js';
import type { IO } from '../io.js';
import { printJson } from '../output.js';
import { connectionFlags, idOrPath } from './common.js';

/** A repository file as GET /repository/files answers. */
export interface RepoFile {
  file_name: string;
  file_path: string;
  size: number;
  encoding: string;
  content: string;
  ref: string;
  blob_id: string;
  commit_id: string;
  last_commit_id: string;
}

/** The project's default branch (for --ref/--branch defaults). */
async function defaultBranch(api: ApiClient, project: string): Promise<string> {
  return (await api.get<{ default_branch: string | null }>(`/projects/${idOrPath(project)}`)).default_branch || 'master';
}

/** Read all of stdin. */
async function readStdin(io: IO): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of io.stdin) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(String(c)));
  return Buffer.concat(chunks);
}

/** The file at a ref, or null when the API answers 404. */
async function fileAt(api: ApiClient, project: string, path: string, ref: string): Promise<RepoFile | null> {
  try {
    return await api.get<RepoFile>(`/projects/${idOrPath(project)}/repository/files`, { file_path: path, ref });
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

/** Registers the `file` noun. */
export function registerFile(program: Command, factory: Factory): void {
  const { io } = factory;
  const file = program.command('file').alias('files').description('read, write and delete files in a repository (each write is a commit)');
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  file
    .command('get')
    .alias('cat')
    .description('print a file (or save it with --output)')
    .argument('<project>', 'id or namespace/path')
    .argument('<path>', 'file path in the repository')
    .option('--ref <ref>', 'branch, tag or commit (default: the default branch)')
    .option('-o, --output <file>', 'write the exact bytes to this file')
    .option('--json', 'print the API JSON (content in base64)')
    .action(async (project: string, path: string, o: { ref?: string; output?: string; json?: boolean }, cmd: Command) => {
      const api = client(cmd);
      const ref = o.ref ?? (await defaultBranch(api, project));
      const f = await api.get<RepoFile>(`/projects/${idOrPath(project)}/repository/files`, { file_path: path, ref });
      if (o.json) return printJson(io, f);
      const content = Buffer.from(f.content, 'base64');
      if (o.output) {
        writeFileSync(o.output, content);
        io.err(`Saved ${f.file_path} at ${ref} (${f.size} bytes) to ${o.output}.\n`);
        return;
      }
      io.out(content.toString('utf8'));
    });

  file
    .command('put')
    .description('create or update a file with a commit on a branch (content from --from-file, --content or stdin)')
    .argument('<project>', 'id or namespace/path')
    .argument('<path>', 'file path in the repository')
    .option('--branch <branch>', 'branch to commit to (default: the default branch)')
    .option('-m, --message <text>', 'commit message (default: "Create <path>" or "Update <path>")')
    .option('--from-file <file>', 'read the content from a local file')
    .option('--content <text>', 'the content as text')
    .option('--json', 'print the API JSON')
    .addHelpText('after', '\nExamples:\n  gantry file put root/app README.md --from-file README.md -m "Docs"\n  echo hello | gantry file put root/app hello.txt --branch dev')
    .action(async (project: string, path: string, o: { branch?: string; message?: string; fromFile?: string; content?: string; json?: boolean }, cmd: Command) => {
      if (o.fromFile !== undefined && o.content !== undefined) throw new UsageError('give either --from-file or --content, not both');
      let content: Buffer;
      if (o.fromFile !== undefined) {
        try {
          content = readFileSync(o.fromFile);
        } catch (e) {
          throw new CliError(`cannot read ${o.fromFile}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
        }
      } else if (o.content !== undefined) content = Buffer.from(o.content);
      else if (!io.stdinIsTTY) content = await readStdin(io);
      else throw new UsageError('no content', 'use --from-file <file>, --content <text>, or pipe the content in');
      const api = client(cmd);
      const branch = o.branch ?? (await defaultBranch(api, project));
      const exists = (await fileAt(api, project, path, branch)) !== null;
      const body = {
        file_path: path, branch_name: branch, encoding: 'base64', content: content.toString('base64'),
        commit_message: o.message ?? `${exists ? 'Update' : 'Create'} ${path}`,
      };
      const r = exists
        ? await api.put<{ file_path: string; branch_name: string }>(`/projects/${idOrPath(project)}/repository/files`, body)
        : await api.post<{ file_path: string; branch_name: string }>(`/projects/${idOrPath(project)}/repository/files`, body);
      io.err(`${exists ? 'Updated' : 'Created'} ${r.file_path} on ${r.branch_name}.\n`);
      if (o.json) printJson(io, r);
    });

  file
    .command('delete')
    .alias('rm')
    .description('delete a file with a commit on a branch')
    .argument('<project>', 'id or namespace/path')
    .argument('<path>', 'file path in the repository')
    .option('--branch <branch>', 'branch to commit to (default: the default branch)')
    .option('-m, --message <text>', 'commit message (default: "Delete <path>")')
    .action(async (project: string, path: string, o: { branch?: string; message?: string }, cmd: Command) => {
      const api = client(cmd);
      const branch = o.branch ?? (await defaultBranch(api, project));
      await api.request('DELETE', `/projects/${idOrPath(project)}/repository/files`, {
        body: { file_path: path, branch_name: branch, commit_message: o.message ?? `Delete ${path}` },
      });
      io.err(`Deleted ${path} on ${branch}.\n`);
    });
}
