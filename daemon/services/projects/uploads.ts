/**
 * Project uploads (POST /projects/:id/uploads, served at /<namespace>/<project>/uploads/<secret>/<filename>):
 * stored at <uploads>/<project id>/<secret>/<filename>, written to a temp file, fsynced, then renamed into place.
 */
import { randomBytes } from 'node:crypto';
import { rm, rmdir } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { notFound, tooLarge } from '../../errors.js';
import { getSettings } from '../instance/settings.js';
import { isForeignKeyViolation } from '../../db/layer/errors.js';
import { insertUpload, projectExists, uploadRecorded } from '../../db/projects.js';
import { writeFileDurably } from '../../durable-files.js';

/** Extensions shown inline as images (and linked with `![...]` in Markdown). */
export const IMAGE_EXTENSIONS = new Set(['png', 'jpg', 'jpeg', 'gif', 'bmp', 'tiff', 'ico', 'svg']);

/** Whether a file name has an image extension. */
export const isImageName = (name: string) => IMAGE_EXTENSIONS.has(extname(name).slice(1).toLowerCase());

/** CarrierWave-style sanitising: keep letters, digits, `.`, `-`, `_` and `+`; never empty, `.` or `..`. */
export function sanitizeFilename(name: string): string {
  const base = basename(name.replace(/\\/g, '/'));
  const clean = base.normalize('NFKC').replace(/[^\p{L}\p{N}._+-]/gu, '_').slice(-200);
  return clean === '' || /^\.+$/.test(clean) ? 'file' : clean;
}

/** The upload size limit in bytes (max_attachment_size is in MB). */
export const maxUploadBytes = async (ctx: AppContext) => (await getSettings(ctx)).maxAttachmentSize * 1024 * 1024;

/** A stored upload. */
export interface StoredUpload {
  secret: string;
  filename: string;
}


/**
 * Store an uploaded file for a project; 413 when it is larger than max_attachment_size (nothing is stored). The file
 * is written first, then its row; when either fails because the project was deleted meanwhile the answer is 404, and
 * the file goes again, so no upload is left without its row.
 */
export async function saveUpload(ctx: AppContext, project: ProjectRow, uploader: UserRow, originalName: string, data: Buffer): Promise<StoredUpload> {
  if (data.length > (await maxUploadBytes(ctx))) throw tooLarge();
  const secret = randomBytes(16).toString('hex');
  const filename = sanitizeFilename(originalName);
  const dir = join(ctx.paths.uploads, String(project.id), secret);
  try {
    await writeFileDurably(dir, filename, data);
    await insertUpload(ctx.data, { projectId: project.id, uploaderId: uploader.id, secret, filename, size: data.length, createdAt: now() });
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    // The project deleted meanwhile: its row is gone (the foreign key), or its directory was being removed under the
    // file (a deletion removes the rows first, then the files). 404, and its own directory goes too unless another
    // upload is in it.
    if (!isForeignKeyViolation(e) && (await projectExists(ctx.data, project.id))) throw e;
    await rmdir(join(ctx.paths.uploads, String(project.id))).catch(() => undefined);
    throw notFound('Project');
  }
  return { secret, filename };
}

/** The absolute path of a recorded upload of a project, or null. */
export async function uploadPath(ctx: AppContext, projectId: number, secret: string, filename: string): Promise<string | null> {
  if (!/^[0-9a-f]{32}$/.test(secret) || filename.includes('\0')) return null;
  return (await uploadRecorded(ctx.data, projectId, secret, filename)) ? join(ctx.paths.uploads, String(projectId), secret, filename) : null;
}
