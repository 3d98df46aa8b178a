// Loading .gitlab-ci.yml text the way GitLab 8.x's Psych (YAML 1.1) did, with limits against
// resource-exhaustion documents.
import { parseAllDocuments, type Tags } from 'yaml';

/** A loaded YAML value: mappings are Maps (keys keep their YAML types), sequences arrays. */
export type YamlValue = unknown;

/** Result of loadYaml. */
export type LoadResult = { ok: true; value: YamlValue } | { ok: false; error: string };

/** Largest .gitlab-ci.yml accepted, in characters. */
export const MAX_CONFIG_LENGTH = 1024 * 1024;
/** Alias expansions allowed per anchor (the yaml package's count x nested aliases). */
export const MAX_ALIAS_COUNT = 500;

const BOOL_TAG = 'tag:yaml.org,2002:bool';

// Psych reads yes/true/on and no/false/off (any case) as booleans, but not y/n as the yaml
// package's 1.1 schema does.
const psychTrue = {
  identify: (v: unknown) => v === true,
  default: true,
  tag: BOOL_TAG,
  test: /^(?:yes|true|on)$/i,
  resolve: () => true,
};
const psychFalse = {
  identify: (v: unknown) => v === false,
  default: true,
  tag: BOOL_TAG,
  test: /^(?:no|false|off)$/i,
  resolve: () => false,
};

function psychTags(tags: Tags): Tags {
  const out: Tags = [];
  for (const t of tags) {
    if (typeof t === 'object' && t.tag === BOOL_TAG) {
      if (!out.includes(psychTrue)) out.push(psychTrue, psychFalse);
      continue;
    }
    out.push(t);
  }
  return out;
}

function firstLine(message: string): string {
  return message.split('\n')[0].replace(/:$/, '');
}

/** Parses YAML 1.1 text (first document; merge keys; duplicate keys: last wins); never throws. */
export function loadYaml(text: string): LoadResult {
  if (text.length > MAX_CONFIG_LENGTH) {
    return { ok: false, error: 'Invalid configuration format: the file is larger than 1 MB' };
  }
  try {
    const docs = parseAllDocuments(text, {
      version: '1.1',
      merge: true,
      uniqueKeys: false,
      customTags: psychTags,
    });
    const list = Array.isArray(docs) ? docs : [];
    if (list.length === 0) return { ok: true, value: null };
    const doc = list[0];
    if (doc.errors.length > 0) return { ok: false, error: `(<unknown>): ${firstLine(doc.errors[0].message)}` };
    return { ok: true, value: doc.toJS({ mapAsMap: true, maxAliasCount: MAX_ALIAS_COUNT }) };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { ok: false, error: `(<unknown>): ${firstLine(message)}` };
  }
}
