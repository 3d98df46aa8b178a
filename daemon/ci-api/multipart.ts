/**
 * A small streaming multipart/form-data reader for artifact uploads: the file part is handed on as a stream while
 * the request arrives (never buffered whole), other parts are read as short text fields. It works with chunked
 * requests (GitLab Runner streams its zip without a Content-Length).
 */
import { PassThrough, type Readable } from 'node:stream';
import { badRequestMessage } from '../errors.js';

/** A file part: its field name, the filename from Content-Disposition, and the fields read before it. */
export interface FilePart {
  field: string;
  filename: string;
  fields: Record<string, string>;
  stream: Readable;
}

const MAX_HEADER_BYTES = 16 * 1024;
const MAX_FIELD_BYTES = 64 * 1024;
const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

/** The boundary of a multipart/form-data Content-Type, or null. */
export function multipartBoundary(contentType: string | undefined): string | null {
  if (!contentType || !/^multipart\/form-data\b/i.test(contentType)) return null;
  const m = contentType.match(/;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i);
  const b = m?.[1] ?? m?.[2];
  return b && b.length <= 200 ? b : null;
}

interface PartHeaders {
  name: string | null;
  filename: string | null;
}

function parseHeaders(block: string): PartHeaders {
  let name: string | null = null;
  let filename: string | null = null;
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon < 0 || line.slice(0, colon).trim().toLowerCase() !== 'content-disposition') continue;
    const value = line.slice(colon + 1);
    const param = (key: string) => {
      const re = new RegExp(`;\\s*${key}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^;]*))`, 'i');
      const m = value.match(re);
      if (!m) return null;
      return m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]!.trim();
    };
    name = param('name');
    const star = value.match(/;\s*filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]*)/);
    if (star) {
      try {
        filename = decodeURIComponent(star[1]!.trim());
      } catch {
        filename = null;
      }
    }
    filename ??= param('filename');
  }
  return { name, filename };
}

/**
 * Read a multipart body. For the first part named `fileField` that has a filename, `onFile` is called with a stream
 * of its bytes (back-pressure respected); its promise is awaited once the body ends. Other file parts are skipped;
 * text fields are collected. Returns the fields and onFile's result (undefined when there was no such file).
 * A malformed body is a 400. When onFile fails, the rest of the body is read and dropped, then its error is thrown.
 */
export async function readMultipart<T>(
  body: AsyncIterable<Buffer | string>,
  boundary: string,
  fileField: string,
  onFile: (part: FilePart) => Promise<T>,
): Promise<{ fields: Record<string, string>; result: T | undefined }> {
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  const fields: Record<string, string> = {};
  // A leading CRLF lets the first boundary be found like the others.
  let buf: Buffer = Buffer.from(CRLF);
  let state: 'preamble' | 'after-delimiter' | 'headers' | 'body' | 'done' = 'preamble';
  let part: PartHeaders | null = null;
  let fieldChunks: Buffer[] = [];
  let fieldSize = 0;
  let file: PassThrough | null = null;
  let fileDone = false;
  let task: Promise<T> | undefined;
  let failed: unknown;

  const emit = async (chunk: Buffer) => {
    if (chunk.length === 0) return;
    if (file) {
      if (failed === undefined && !file.destroyed && !file.write(chunk)) {
        await new Promise<void>((resolve) => {
          const f = file!;
          const done = () => {
            f.off('drain', done);
            f.off('close', done);
            resolve();
          };
          f.on('drain', done);
          f.on('close', done);
        });
      }
    } else if (part?.name && part.filename === null) {
      fieldSize += chunk.length;
      if (fieldSize > MAX_FIELD_BYTES) throw badRequestMessage(`400 (Bad request) "${part.name}" is too long`);
      fieldChunks.push(chunk);
    }
  };
  const endPart = () => {
    if (file) {
      file.end();
      file = null;
      fileDone = true;
    } else if (part?.name && part.filename === null) {
      fields[part.name] = Buffer.concat(fieldChunks).toString('utf8');
    }
    part = null;
    fieldChunks = [];
    fieldSize = 0;
  };
  const startPart = (headers: PartHeaders) => {
    part = headers;
    if (headers.name === fileField && headers.filename !== null && !fileDone && !task) {
      file = new PassThrough({ highWaterMark: 256 * 1024 });
      // A handler that gave up without reading (a bad expire_in) leaves no listener: the 'multipart body ended early'
      // given to destroy() below would then be an unhandled 'error' event, which ends the process.
      file.on('error', () => undefined);
      task = onFile({ field: headers.name, filename: headers.filename, fields: { ...fields }, stream: file });
      task.catch((e: unknown) => {
        failed = e;
        file?.resume();
      });
    }
  };


  /** Advance the state machine over `buf` as far as the bytes allow. */
  const consume = async () => {
    let progressed = true;
    while (progressed && state !== 'done') {
      progressed = false;
      if (state === 'preamble' || state === 'body') {
        const at = buf.indexOf(delimiter);
        if (at >= 0) {
          if (state === 'body') {
            await emit(buf.subarray(0, at));
            endPart();
          }
          buf = buf.subarray(at + delimiter.length);
          state = 'after-delimiter';
          progressed = true;
        } else {
          // Keep a tail that could be the start of a delimiter.
          const keep = Math.min(buf.length, delimiter.length - 1);
          if (state === 'body') await emit(buf.subarray(0, buf.length - keep));
          buf = buf.subarray(buf.length - keep);
        }
      } else if (state === 'after-delimiter') {
        if (buf.length < 2) return;
        if (buf[0] === 0x2d && buf[1] === 0x2d) {
          state = 'done';
          return;
        }
        const eol = buf.indexOf(CRLF);
        if (eol < 0) {
          if (buf.length > 1024) throw badRequestMessage('400 (Bad request) malformed multipart body');
          return;
        }
        buf = buf.subarray(eol + 2); // transport padding, then CRLF
        state = 'headers';
        progressed = true;
      } else if (state === 'headers') {
        // A part with no headers starts with the blank line directly.
        const end = buf.subarray(0, 2).equals(CRLF) ? -2 : buf.indexOf(HEADER_END);
        if (end === -1) {
          if (buf.length > MAX_HEADER_BYTES) throw badRequestMessage('400 (Bad request) malformed multipart body');
          return;
        }
        const block = end === -2 ? '' : buf.subarray(0, end).toString('utf8');
        buf = buf.subarray(end === -2 ? 2 : end + 4);
        startPart(parseHeaders(block));
        state = 'body';
        progressed = true;
      }
    }
  };

  let error: unknown;
  // The whole body is always read (breaking out of the loop would destroy the request and its socket).
  for await (const raw of body) {
    if (state === 'done') continue;
    const chunk = typeof raw === 'string' ? Buffer.from(raw) : raw;
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    try {
      await consume();
    } catch (e) {
      error = e;
      state = 'done';
    }
  }
  if (state !== 'done' || error !== undefined) {
    if (file) (file as PassThrough).destroy(new Error('multipart body ended early'));
    if (task) await task.catch(() => undefined);
    throw error ?? badRequestMessage('400 (Bad request) malformed multipart body');
  }
  const result = task ? await task : undefined;
  if (failed !== undefined) throw failed;
  return { fields, result };
}
