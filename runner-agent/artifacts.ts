/** Build artifacts on the runner side: matching `artifacts:paths` (and untracked files), tar.gz archives, extraction. */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, lstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { isAbsolute, join, normalize, relative, sep } from 'node:path';
import * as tar from 'tar';
import type { ArtifactsOptions } from './types.js';

/** Whether a path pattern has glob characters. */
export function isGlob(pattern: string): boolean {
  return /[*?[]/.test(pattern);
}

/** A glob pattern (`*` within a segment, `**` across segments, `?`, `[...]`) as a RegExp on `/`-separated relative paths. */
export function globToRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*') {
      if (pattern[i + 1] === '*') {
        i++;
        if (pattern[i + 1] === '/') {
          i++;
          re += '(?:.*/)?';
        } else re += '.*';
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 1);
      if (end === -1) re += '\\[';
      else {
        const body = pattern.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\');
        re += `[${body}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** A user path made relative to the project dir; null when it points outside of it. */
export function normaliseArtifactPath(path: string): string | null {
  if (isAbsolute(path)) return null;
  const n = normalize(path).split(sep).join('/').replace(/\/+$/, '');
  if (n === '..' || n.startsWith('../')) return null;
  return n === '' ? '.' : n;
}

/** Every file and directory under `dir` (relative, `/`-separated), skipping `.git`. */
function walk(dir: string, prefix = '', out: string[] = []): string[] {
  let entries: string[];
  try {
    entries = readdirSync(join(dir, prefix));
  } catch {
    return out;
  }
  for (const name of entries.sort()) {
    if (prefix === '' && name === '.git') continue;
    const rel = prefix ? `${prefix}/${name}` : name;
    out.push(rel);
    let isDir = false;
    try {
      const st = lstatSync(join(dir, rel));
      isDir = st.isDirectory() && !st.isSymbolicLink();
    } catch {
      /* vanished */
    }
    if (isDir) walk(dir, rel, out);
  }
  return out;
}

/** One `artifacts:paths` entry and what it matched (relative paths; directories are archived with their content). */
export interface PathMatch {
  pattern: string;
  matches: string[];
  /** How many files the matches hold (a matched directory counts the files under it, as GitLab Runner reports). */
  files: number;
  /** Why nothing was matched, when the pattern was refused. */
  error?: string;
}

/** Expand `artifacts:paths` in the project dir. */
export function matchArtifactPaths(projectDir: string, patterns: string[]): PathMatch[] {
  let all: string[] | null = null;
  return patterns.map((pattern) => {
    const rel = normaliseArtifactPath(String(pattern));
    if (rel === null) return { pattern, matches: [], files: 0, error: 'the path is outside of the project directory' };
    if (!isGlob(rel)) {
      const matches = existsSync(join(projectDir, rel)) || isLink(join(projectDir, rel)) ? [rel] : [];
      return { pattern, matches, files: fileCount(projectDir, matches) };
    }
    all ??= walk(projectDir);
    const re = globToRegExp(rel);
    const matches = all.filter((p) => re.test(p));
    return { pattern, matches, files: fileCount(projectDir, matches) };
  });
}

/** The files (not directories) the matched paths hold, each counted once: a directory counts what is under it. */
function fileCount(projectDir: string, matches: string[]): number {
  const files = new Set<string>();
  for (const m of matches) {
    if (isRealDir(join(projectDir, m))) {
      for (const p of walk(projectDir, m)) if (!isRealDir(join(projectDir, p))) files.add(p);
    } else files.add(m);
  }
  return files.size;
}

function isRealDir(path: string): boolean {
  try {
    const st = lstatSync(path);
    return st.isDirectory() && !st.isSymbolicLink();
  } catch {
    return false;
  }
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Files git does not track in the project dir (`git ls-files -o`: ignored files included, as GitLab Runner does). */
export function untrackedFiles(projectDir: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  return new Promise((resolve) => {
    const child = spawn('git', ['ls-files', '-o', '-z'], { cwd: projectDir, env, stdio: ['ignore', 'pipe', 'ignore'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.on('error', () => resolve([]));
    child.on('close', (code) => resolve(code === 0 ? Buffer.concat(out).toString('utf8').split('\0').filter(Boolean) : []));
  });
}

/** Remove entries contained in an earlier directory entry and duplicates, keeping the order. */
export function dedupePaths(paths: string[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const p of paths) {
    if (seen.has(p)) continue;
    seen.add(p);
    out.push(p);
  }
  return out.filter((p) => !out.some((q) => q !== p && (q === '.' || p.startsWith(`${q}/`))));
}

/** The archive's file name: `<artifacts:name>.tar.gz` (default `artifacts.tar.gz`). */
export function archiveName(options: ArtifactsOptions | null | undefined): string {
  const name = (options?.name ?? '').split('/').pop()!.trim().replace(/[\0]/g, '');
  return `${name && name !== '.' && name !== '..' ? name : 'artifacts'}.tar.gz`;
}

/** Whether artifacts are uploaded for this outcome (`when`: on_success (default), on_failure, always). */
export function shouldUpload(options: ArtifactsOptions | null | undefined, succeeded: boolean): boolean {
  if (!options) return false;
  const hasPaths = Array.isArray(options.paths) && options.paths.length > 0;
  if (!hasPaths && !options.untracked) return false;
  const when = options.when ?? 'on_success';
  if (when === 'always') return true;
  if (when === 'on_failure') return !succeeded;
  return succeeded;
}

/** Write a tar.gz of `paths` (relative to `cwd`) to `file`. */
export async function createArchive(cwd: string, paths: string[], file: string): Promise<void> {
  await tar.c({ gzip: true, cwd, file, portable: true }, paths);
}

/** Extract an artifacts archive (tar.gz, or zip made by GitLab Runner, through `unzip`) into `dir`. */
export async function extractArchive(file: string, dir: string): Promise<void> {
  const magic = Buffer.alloc(4);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, magic, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
  if (magic[0] === 0x50 && magic[1] === 0x4b) {
    await new Promise<void>((resolve, reject) => {
      const child = spawn('unzip', ['-o', '-q', file, '-d', dir], { stdio: 'ignore' });
      child.on('error', (e) => reject(new Error(`cannot run unzip for a zip archive: ${e.message}`)));
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`unzip exited with ${code}`))));
    });
    return;
  }
  await tar.x({ file, cwd: dir, strict: true });
}

/** A path relative to `from`, `/`-separated (for messages). */
export function displayPath(from: string, path: string): string {
  return relative(from, path).split(sep).join('/');
}
