/**
 * Build artifacts: one archive per build at <artifacts>/<project id>/<build id>/<filename>, streamed to a temp
 * file (never buffered), fsynced, size-checked, then renamed into place. commit_statuses.artifacts_file holds the
 * filename, artifacts_size the size and artifacts_expire_at the expiry (null = kept forever).
 */
import { randomBytes } from 'node:crypto';
import { settingsColumn } from '../../db/settings.js';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import { invalidParam, tooLarge } from '../../errors.js';
import { parseDuration } from '../../ci/duration.js';
import { sanitizeFilename } from '../projects/uploads.js';
import { registerStorage } from '../repository/storage.js';
import { syncDir, syncFile } from '../../durable-files.js';
import { artifactsFileOf, buildsWithExpiredArtifacts, setArtifactsColumns } from '../../db/builds.js';

/** What the artifacts functions need of a build row. */
export interface ArtifactsBuild {
  id: number;
  projectId: number;
  artifactsFile?: string | null;
}

/** GitLab's default max_artifacts_size (MB), used when the setting column is absent. */
export const DEFAULT_MAX_ARTIFACTS_SIZE_MB = 100;

/** The artifacts size limit in bytes (application setting max_artifacts_size, MB); an upload must be strictly smaller. */
export async function maxArtifactsBytes(ctx: AppContext): Promise<number> {
  const mb = Number(await settingsColumn(ctx.data, 'max_artifacts_size'));
  if (Number.isFinite(mb) && mb > 0) return mb * 1024 * 1024;
  return DEFAULT_MAX_ARTIFACTS_SIZE_MB * 1024 * 1024;
}

const buildDir = (ctx: AppContext, build: ArtifactsBuild) => join(ctx.paths.artifacts, String(build.projectId), String(build.id));

/** The stored archive of a build (absolute path), or null when it has none. */
export async function artifactsFilePath(ctx: AppContext, build: ArtifactsBuild): Promise<string | null> {
  let file = build.artifactsFile;
  if (file === undefined) {
    file = await artifactsFileOf(ctx.data, build.id);
  }
  if (!file) return null;
  const path = join(buildDir(ctx, build), file);
  return existsSync(path) ? path : null;
}

/**
 * `expire_in` text -> the expiry time (ISO) or null (never); undefined/blank means never.
 * Throws 400 `"expire_in" is invalid` for a text that is not a duration.
 */
export function artifactsExpiry(expireIn: string | null | undefined, from = Date.now()): string | null {
  if (expireIn === undefined || expireIn === null || String(expireIn).trim() === '') return null;
  const parsed = parseDuration(String(expireIn));
  if (!parsed.ok) throw invalidParam('expire_in');
  return parsed.seconds === null ? null : new Date(from + parsed.seconds * 1000).toISOString();
}


/**
 * Store a build's artifacts archive from a stream (or a file path), replacing any previous one. Throws 413 when
 * the data reaches the size limit (nothing is stored) and 400 for a bad `expireIn`. Returns the stored size.
 */
export async function storeArtifacts(
  ctx: AppContext,
  build: ArtifactsBuild,
  source: Readable | string,
  filename: string,
  expireIn?: string | null,
  opts: { maxBytes?: number } = {},
): Promise<{ filename: string; size: number; expireAt: string | null }> {
  const expireAt = artifactsExpiry(expireIn);
  const limit = opts.maxBytes ?? (await maxArtifactsBytes(ctx));
  const name = sanitizeFilename(filename || 'artifacts.zip');
  const dir = buildDir(ctx, build);
  await mkdir(dir, { recursive: true });
  const temp = join(dir, `.tmp-${randomBytes(8).toString('hex')}`);
  let size = 0;
  let over = false;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size >= limit) {
        over = true;
        done(tooLarge());
        return;
      }
      done(null, chunk);
    },
  });
  const input = typeof source === 'string' ? createReadStream(source) : source;
  try {
    const out = createWriteStream(temp, { flags: 'wx', mode: 0o640 });
    await pipeline(input, counter, out);
    await syncFile(temp);
  } catch (e) {
    await rm(temp, { force: true });
    // drain the rest of the request so the client reads our answer
    if (typeof source !== 'string' && !source.destroyed) source.resume();
    if (over) throw tooLarge();
    throw e;
  }
  // Replace: old files other than the new one go away.
  for (const f of await readdir(dir)) if (f !== name && !f.startsWith('.tmp-')) await rm(join(dir, f), { force: true });
  await rename(temp, join(dir, name));
  await syncDir(dir);
  await setArtifactsColumns(ctx.data, build.id, { file: name, size, expireAt }, now());
  return { filename: name, size, expireAt };
}

/** Remove a build's artifacts (files and columns). */
export async function removeArtifacts(ctx: AppContext, build: ArtifactsBuild): Promise<void> {
  await rm(buildDir(ctx, build), { recursive: true, force: true });
  await setArtifactsColumns(ctx.data, build.id, { file: null, size: null, expireAt: null }, now());
}

/** Remove every artifact whose expiry has passed; returns how many builds lost their artifacts. */
export async function removeExpiredArtifacts(ctx: AppContext): Promise<number> {
  const rows = await buildsWithExpiredArtifacts(ctx.data, now());
  for (const r of rows) await removeArtifacts(ctx, r);
  return rows.length;
}

registerStorage({
  removed: async (ctx, projectId) => rm(join(ctx.paths.artifacts, String(projectId)), { recursive: true, force: true }),
});
