/** Creating, copying and removing bare repositories on disk (each built in a temporary directory, then renamed). */
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { syncDir } from '../durable-files.js';
import { closeRepositoryProcesses } from './batch.js';
import { runGit } from './command.js';
import { branchRef, validBranchName } from './refs.js';

const tempSibling = (path: string) => join(dirname(path), `.tmp-${basename(path)}-${randomBytes(6).toString('hex')}`);

async function setHead(gitDir: string, branch: string): Promise<void> {
  await runGit(['symbolic-ref', 'HEAD', branchRef(validBranchName(branch) ? branch : 'master')], { gitDir });
}

/** The config of a new bare repository, as `git init --bare` writes it. */
const BARE_CONFIG = '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n';

/**
 * Create an empty bare repository whose HEAD points at `defaultBranch`. An existing repository is left alone.
 * The files are written directly, exactly what `git init --bare --template=` and `git symbolic-ref HEAD` leave
 * (HEAD, config, objects/{info,pack}, refs/{heads,tags}): two git processes per project creation cost more than
 * the rest of the request (spawning from a daemon of 100 MB takes about 10 ms each).
 */
export async function initBareRepository(path: string, defaultBranch: string): Promise<void> {
  if (existsSync(join(path, 'HEAD'))) return;
  await mkdir(dirname(path), { recursive: true });
  const tmp = tempSibling(path);
  try {
    for (const dir of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags']) await mkdir(join(tmp, dir), { recursive: true });
    await writeFile(join(tmp, 'config'), BARE_CONFIG);
    await writeFile(join(tmp, 'HEAD'), `ref: ${branchRef(validBranchName(defaultBranch) ? defaultBranch : 'master')}\n`);
    await rename(tmp, path);
    // The new name survives a crash (the database row it belongs to is already committed).
    await syncDir(dirname(path));
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/**
 * Copy a repository's objects and refs (branches and tags) into a new bare repository (a fork). When the source does
 * not exist, the copy is an empty repository.
 */
export async function copyBareRepository(source: string, path: string, defaultBranch: string): Promise<void> {
  if (!existsSync(join(source, 'HEAD'))) return initBareRepository(path, defaultBranch);
  await mkdir(dirname(path), { recursive: true });
  const tmp = tempSibling(path);
  try {
    // --no-local: objects are copied through the pack protocol (no hard links into the source's object store).
    await runGit(['clone', '--bare', '--no-local', '--quiet', '--template=', '--', source, tmp], { timeoutMs: 60 * 60 * 1000 });
    await runGit(['config', '--remove-section', 'remote.origin'], { gitDir: tmp, okCodes: [0, 5, 128] });
    await setHead(tmp, defaultBranch);
    await rm(path, { recursive: true, force: true });
    await rename(tmp, path);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** Remove a repository from disk (missing is fine) and stop its cat-file processes. */
export async function removeBareRepository(path: string): Promise<void> {
  closeRepositoryProcesses(path);
  await rm(path, { recursive: true, force: true });
}
