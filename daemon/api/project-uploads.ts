/**
 * POST /api/v3/projects/:id/uploads. This plugin parses multipart bodies itself (instead of the app-wide
 * keyValues parser, which drops file names) and stops reading at max_attachment_size plus form overhead.
 */
import { extname } from 'node:path';
import { Type } from '@sinclair/typebox';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequestMessage, invalidParam, tooLarge } from '../errors.js';
import { isImageName, maxUploadBytes, saveUpload } from '../services/uploads.js';
import { ProjectIdParams } from './params.js';
import { callerOf, dropBlankParams, loadProject, projectOf } from './project-scope.js';

/** A file part of a multipart body, with its client-side name. */
export interface UploadedFile {
  filename: string;
  data: Buffer;
}

// Room for boundaries, part headers and small text fields (a private_token, for example) around the file itself.
const FORM_OVERHEAD = 64 * 1024;

async function parseForm(contentType: string, raw: Uint8Array<ArrayBuffer>): Promise<Record<string, unknown>> {
  let form: FormData;
  try {
    form = await new Response(raw, { headers: { 'content-type': contentType } }).formData();
  } catch {
    throw badRequestMessage('400 (Bad request) the multipart body could not be parsed');
  }
  const body: Record<string, unknown> = {};
  for (const [key, value] of form.entries()) {
    if (typeof value === 'string') body[key] = value;
    else body[key] = { filename: value.name, data: Buffer.from(await value.arrayBuffer()) } satisfies UploadedFile;
  }
  return body;
}

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
  api.addContentTypeParser('multipart/form-data', async (request: FastifyRequest, payload: IncomingMessage) => {
    const limit = maxUploadBytes(ctx) + FORM_OVERHEAD;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of payload) {
      size += (chunk as Buffer).length;
      if (size > limit) throw tooLarge();
      chunks.push(chunk as Buffer);
    }
    const raw = new Uint8Array(size);
    let at = 0;
    for (const c of chunks) {
      raw.set(c, at);
      at += c.length;
    }
    return parseForm(String(request.headers['content-type']), raw);
  });

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
