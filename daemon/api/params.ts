/** Shared parameter schemas and coercions for API routes (TypeBox, so validation and OpenAPI share one source). */
import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';

/** A required non-blank string: blank counts as not given, as GitLab's required_attributes! does. */
export const RequiredString = (opts: object = {}) => Type.String({ minLength: 1, ...opts });

/**
 * A text field that an update may change but never erase: on a PUT, dropBlankParams keeps its blank value (instead of
 * dropping it as not given) so the service refuses it, `{"message":{"<field>":["can't be blank"]}}`. On a POST a blank
 * is still not given (8.x required_attributes!). The `x-not-blank` mark is a no-op keyword for the validator (app.ts).
 */
export const NotBlank = (opts: object = {}) => Type.String({ ...opts, [NOT_BLANK]: true });
export const NOT_BLANK = 'x-not-blank';

/** A boolean param; app.ts turns 1/0, t/f, yes/no, on/off (any case) into true/false before validation. */
export const Bool = (opts: object = {}) => Type.Boolean(opts);

/** An integer param (query and form strings are coerced). */
export const Int = (opts: object = {}) => Type.Integer(opts);

/**
 * A nullable variant of a schema, for responses and bodies. Schemas with a single `type` become `type: [T, 'null']`,
 * which fast-json-stringify serialises directly (an `anyOf` would run an ajv check on every value).
 */
export const Nullable = <T extends TSchema>(schema: T): TUnsafe<Static<T> | null> => {
  const type = (schema as { type?: unknown }).type;
  if (typeof type === 'string') return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'] });
  return Type.Unsafe<Static<T> | null>(Type.Union([schema, Type.Null()]));
};

/** `:id` of a project: a numeric id or a URL-encoded `namespace/path`. */
export const ProjectIdParams = Type.Object({ id: Type.String({ description: 'project ID or URL-encoded NAMESPACE/PATH' }) });

/** page and per_page, on every list. */
export const PageParams = {
  page: Type.Optional(Type.String({ description: 'page number, from 1' })),
  per_page: Type.Optional(Type.String({ description: 'items per page, default 20, at most 100' })),
};

export { normalizeBoolean, VISIBILITY_BY_NAME } from '../param-values.js';

/** Pick the keys of `params` that were given (not undefined), for partial updates. */
export function given<T extends object>(params: T): Partial<T> {
  return Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Response schema of a route that streams a file or text (blobs, archives, artifacts, traces): documented in the
 * OpenAPI document as binary content; Fastify sends streams and buffers as they are, without serialising.
 */
export const FileResponse = (contentType: string, description: string) => ({
  description,
  content: { [contentType]: { schema: { type: 'string', format: 'binary' } } },
});

/** The largest id a row can have and a JavaScript number can carry exactly. */
const MAX_ID = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * 404 for an integer path parameter (`:id`, `:issue_id`, `:runner_id` ...) that is written as an integer but can name
 * no row: zero, negative, or past the largest id; and for one written as a number in any other form (`+5`, `1e3`,
 * `0x10`, `1.5`, ` 7`, `Infinity`, only blanks), which the params schema would coerce to a number that the route's
 * loaders, reading the plain digits of the path, do not see (those were 500). Text that is not a number is left to the
 * params schema (400, as 8.x's Grape `type: Integer`). Runs before a route's loaders, so none of them sees such an id.
 */
export function oddIdParam(request: FastifyRequest): string | null {
  const schema = (request.routeOptions.schema as { params?: { properties?: Record<string, { type?: unknown }> } } | undefined)?.params;
  const params = request.params as Record<string, unknown> | undefined;
  if (!schema?.properties || !params) return null;
  for (const [key, prop] of Object.entries(schema.properties)) {
    if (prop.type !== 'integer') continue;
    const raw = String(params[key] ?? '');
    if (/^\d+$/.test(raw)) {
      const n = BigInt(raw);
      if (n <= 0n || n > MAX_ID) return key;
    } else if (raw !== '' && !Number.isNaN(Number(raw))) {
      return key;
    }
  }
  return null;
}
