/**
 * GET /<namespace>/<project>/uploads/<secret>/<filename>: serves project uploads with the project's visibility:
 * public projects to anyone, others to callers with a token (private_token/PRIVATE-TOKEN/...) who can read the
 * project; anything hidden or absent is 404.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { UserRow } from '../db/schema.js';
import { ApiError, notFound } from '../errors.js';
import { authenticate } from '../policy/authentication.js';
import { anonymousCanDownload, canProjectAsync, PUBLIC } from '../policy/permissions.js';
import { lookupProjectAsync } from '../services/projects/projects.js';
import { isImageName, uploadPath } from '../services/projects/uploads.js';

const TYPES: Record<string, string> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', bmp: 'image/bmp', tiff: 'image/tiff',
  ico: 'image/x-icon', svg: 'image/svg+xml',
};

/** Registers the uploads download route. */
export default async function uploadRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  app.get('/:namespace/:project/uploads/:secret/:filename', { schema: { hide: true } }, async (request, reply) => {
    const p = request.params as { namespace: string; project: string; secret: string; filename: string };
    const project = await lookupProjectAsync(ctx, `${p.namespace}/${p.project}`);
    if (!project) throw notFound();
    if (!anonymousCanDownload(project)) {
      let user: UserRow | null;
      try {
        user = await authenticate(ctx, request);
      } catch (e) {
        if (e instanceof ApiError) throw notFound();
        throw e;
      }
      if (!(await canProjectAsync(ctx, user, 'read_project', project))) throw notFound();
    }
    const file = await uploadPath(ctx, project.id, p.secret, p.filename);
    const info = file ? await stat(file).catch(() => null) : null;
    if (!file || !info?.isFile()) throw notFound();
    const ext = extname(p.filename).slice(1).toLowerCase();
    const image = isImageName(p.filename);
    const encoded = encodeURIComponent(p.filename);
    reply
      .header('Content-Type', (image ? TYPES[ext] : undefined) ?? 'application/octet-stream')
      .header('Content-Length', String(info.size))
      .header('Content-Disposition', `${image ? 'inline' : 'attachment'}; filename="${encoded}"; filename*=UTF-8''${encoded}`)
      .header('X-Content-Type-Options', 'nosniff')
      // An uploaded SVG or HTML must never run scripts in our origin.
      .header('Content-Security-Policy', "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox")
      .header('Cache-Control', project.visibilityLevel === PUBLIC ? 'public, max-age=31536000' : 'private, max-age=0');
    return reply.send(createReadStream(file));
  });
}
