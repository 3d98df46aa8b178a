/**
 * POST /api/v3/projects/:id/uploads. Multipart bodies here may be as large as max_attachment_size plus form
 * overhead (instead of the app-wide --max-body-size); reading stops there with 413.
 */
import type { IncomingMessage } from 'node:http';
import { extname } from 'node:path';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { invalidParam } from '../errors.js';
import { parseMultipartForm, readBodyWithin, type UploadedFile } from './multipart-form.js';
import { isImageName, maxUploadBytes, saveUpload } from '../services/projects/uploads.js';
import { ProjectIdParams } from './params.js';
import { callerOf, dropBlankParams, loadProject, projectOf } from './project-scope.js';

// Room for boundaries, part headers and small text fields (a private_token, for example) around the file itself.
const FORM_OVERHEAD = 64 * 1024;

/** The Upload result of 8.x: alt, url (relative to the project) and a Markdown link (an image link for images). */
export function uploadResult(secret: string, filename: string) {
  const alt = filename.slice(0, filename.length - extname(filename).length) || filename;
  const url = `/uploads/${secret}/${filename}`;
  const link = `[${alt.replace(/[[\]]/g, (c) => `\\${c}`)}](${url})`;
  return { alt, url, markdown: isImageName(filename) ? `!${link}` : link };
}

const isUploadedFile = (v: unknown): v is UploadedFile =>
  typeof v === 'object' && v !== null && Buffer.isBuffer((v as UploadedFile).data) && typeof (v as UploadedFile).filename === 'string';

/** Registers the uploads route with its own multipart parser. */
export default async function projectUploadRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  api.removeContentTypeParser('multipart/form-data');
  // (multipartFormParser's, with the limit read from the settings on the data layer)
  api.addContentTypeParser('multipart/form-data', async (request: { headers: IncomingMessage['headers'] }, payload: IncomingMessage) =>
    parseMultipartForm(String(request.headers['content-type']), await readBodyWithin(payload, (await maxUploadBytes(ctx)) + FORM_OVERHEAD)));

  api.post('/projects/:id/uploads', {
    preValidation: [loadProject('upload_file'), dropBlankParams],
    schema: {
      tags: ['projects'],
      consumes: ['multipart/form-data'],
      params: ProjectIdParams,
      body: Type.Object({ file: Type.Unsafe<UploadedFile>({ description: 'the file (multipart part)' }) }),
      response: { 201: Type.Object({ alt: Type.String(), url: Type.String(), markdown: Type.String() }) },
    },
  }, async (request, reply) => {
    const file = (request.body as { file: unknown }).file;
    if (!isUploadedFile(file)) throw invalidParam('file');
    const stored = await saveUpload(ctx, projectOf(request), callerOf(request), file.filename, file.data);
    return reply.code(201).send(uploadResult(stored.secret, stored.filename));
  });
}
