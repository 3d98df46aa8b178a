/** Creating, copying and removing bare repositories on disk (each built in a temporary directory, then renamed). */
import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { closeRepositoryProcesses } from './batch.js';
import { runGit } from './command.js';
import { branchRef, validBranchName } from './refs.js';

const tempSibling = (path: string) => join(dirname(path), `.tmp-${basename(path)}-${randomBytes(6).toString('hex')}`);

async function setHead(gitDir: string, branch: string): Promise<void> {
  await runGit(['symbolic-ref', 'HEAD', branchRef(validBranchName(branch) ? branch : 'master')], { gitDir });
}

/** Create an empty bare repository whose HEAD points at `defaultBranch`. An existing repository is left alone. */
export async function initBareRepository(path: string, defaultBranch: string): Promise<void> {
  if (existsSync(join(path, 'HEAD'))) return;
  await mkdir(dirname(path), { recursive: true });
  const tmp = tempSibling(path);
  try {
    // --template= : no sample hooks or description; hooks come from core.hooksPath at push time.
    await runGit(['init', '--bare', '--quiet', '--template=', '--', tmp]);
    await setHead(tmp, defaultBranch);
    await rename(tmp, path);
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
