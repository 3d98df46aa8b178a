/**
 * Typed API errors, named by HTTP meaning, turned into the spec's bodies by one error handler (app.ts).
 * Routes and services throw these; nothing else produces an error response.
 */
export class ApiError extends Error {
  constructor(
    public readonly statusCode: number,
    public readonly body: unknown,
    public readonly headers: Record<string, string> = {},
  ) {
    super(typeof body === 'object' && body && 'message' in body ? String((body as { message: unknown }).message) : `HTTP ${statusCode}`);
  }
}

/** 400 `"<attr>" not given`: a required attribute is missing or blank. */
export const badRequest = (attr: string) => new ApiError(400, { message: `400 (Bad request) "${attr}" not given` });
/** 400 `"<attr>" is invalid` (or does not have a valid value). */
export const invalidParam = (attr: string, how = 'is invalid') => new ApiError(400, { message: `400 (Bad request) "${attr}" ${how}` });
/** 400 with a free message (for example a failed repository file commit). */
export const badRequestMessage = (message: string) => new ApiError(400, { message });
/** 400 with the validation hash: `{message: {field: [errors]}}`. */
export const validationError = (errors: Record<string, unknown>) => new ApiError(400, { message: errors });
/** 401 `401 Unauthorized`. */
export const unauthorized = () => new ApiError(401, { message: '401 Unauthorized' });
/** 403 `403 Forbidden` or `403 Forbidden - <reason>`. */
export const forbidden = (reason?: string) => new ApiError(403, { message: reason ? `403 Forbidden - ${reason}` : '403 Forbidden' });
/** 404 `404 Not Found` or `404 <resource> Not Found`. */
export const notFound = (resource?: string) => new ApiError(404, { message: resource ? `404 ${resource} Not Found` : '404 Not Found' });
/** 404 with a free message. */
export const notFoundMessage = (message: string) => new ApiError(404, { message });
/** 405 `405 Method Not Allowed` (or a given message). */
export const notAllowed = (message = '405 Method Not Allowed') => new ApiError(405, { message });
/** 409 `409 Conflict` or a given message. */
export const conflict = (message = '409 Conflict') => new ApiError(409, { message });
/** 413 the body or file is too large. */
export const tooLarge = (message = '413 Request Entity Too Large') => new ApiError(413, { message });
/** 422 with a message. */
export const unprocessable = (message: string) => new ApiError(422, { message });
/** 304: no body. */
export const notModified = () => new ApiError(304, null);

/** Whether a request failed because its body is over --max-body-size (Fastify's 413, or a multipart part over it). */
export function bodyTooLarge(error: unknown): boolean {
  const e = error as { statusCode?: number; code?: string } | null;
  return e?.statusCode === 413 || e?.code === 'FST_REQ_FILE_TOO_LARGE';
}
