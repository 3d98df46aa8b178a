/**
 * multipart/form-data bodies of API routes, read whole up to a byte limit (413 past it, nothing handed on) and
 * parsed with the platform's FormData: text parts become strings, file parts UploadedFile, repeated names arrays.
 * The app uses it for every API form (limit --max-body-size); /projects/:id/uploads with max_attachment_size.
 */
import type { IncomingMessage } from 'node:http';
import { ApiError, badRequestMessage, tooLarge } from '../errors.js';

/** A file part of a multipart body, with its client-side name. */
export interface UploadedFile {
  filename: string;
  data: Buffer;
}

/** Read a request body of at most `limit` bytes; throws 413 as soon as it grows past it (the rest is not read). */
export async function readBodyWithin(payload: IncomingMessage, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  const declared = Number(payload.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of payload) {
      size += (chunk as Buffer).length;
      if (size > limit) throw tooLarge();
      chunks.push(chunk as Buffer);
    }
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw badRequestMessage('400 (Bad request) the request body ended early: send it whole');
  }
  const raw = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    raw.set(c, at);
    at += c.length;
  }
  return raw;
}

/** Parse a multipart/form-data body; 400 when it is not one. */
export async function parseMultipartForm(contentType: string, raw: Uint8Array<ArrayBuffer>): Promise<Record<string, unknown>> {
  let form: FormData;
  try {
    form = await new Response(raw, { headers: { 'content-type': contentType } }).formData();
  } catch {
    throw badRequestMessage('400 (Bad request) the multipart body could not be parsed: give a boundary and end the body with --<boundary>--');
  }
  const body: Record<string, unknown> = Object.create(null);
  for (const [key, value] of form.entries()) {
    const item = typeof value === 'string' ? value : ({ filename: value.name, data: Buffer.from(await value.arrayBuffer()) } satisfies UploadedFile);
    const prior = body[key];
    if (prior === undefined) body[key] = item;
    else if (Array.isArray(prior)) prior.push(item);
    else body[key] = [prior, item];
  }
  return { ...body };
}

/** A Fastify content type parser for multipart/form-data bodies of at most `limit()` bytes. */
export const multipartFormParser = (limit: () => number) => async (request: { headers: IncomingMessage['headers'] }, payload: IncomingMessage) =>
  parseMultipartForm(String(request.headers['content-type']), await readBodyWithin(payload, limit()));
