// What the fuzzer sends: the routes (read from the daemon's OpenAPI document at run time, plus git over HTTP, the
// runner API, /oauth and the few routes the document hides) and, for request i of a seed, one hostile request.
import { ODD_IDS, NASTY, BAD_JSON, CONTENT_TYPES, anyValue, deepJson, junkPktLines, randomText, rng, traversals } from './inputs.mjs';

/** Routes the OpenAPI document does not list (hidden or served outside /api/v3), as OpenAPI-style templates. */
const EXTRA = [
  ['GET', '/-/health'], ['GET', '/api/v3/projects/{id}/repository/archive.zip'], ['GET', '/api/v3/projects/{id}/repository/archive.tar.gz'],
  ['GET', '/{namespace}/{project}/uploads/{secret}/{filename}'],
  ['GET', '/oauth/authorize'], ['POST', '/oauth/authorize'], ['POST', '/oauth/token'], ['POST', '/oauth/revoke'], ['GET', '/oauth/token/info'],
  ['GET', '/nonexistent/route'], ['OPTIONS', '/api/v3/projects'], ['HEAD', '/api/v3/projects'],
];

/** The operations to fuzz: [{ method, path, params: [{ name, in, type }], body: schema | null, bodyType }]. */
export async function loadOperations(url) {
  const doc = await (await fetch(`${url}/api/v3/openapi.json`)).json();
  const ops = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const content = op.requestBody?.content ?? {};
      const bodyType = Object.keys(content)[0] ?? null;
      ops.push({
        method: method.toUpperCase(), path,
        params: (op.parameters ?? []).map((x) => ({ name: x.name, in: x.in, type: x.schema?.type ?? 'string' })),
        body: bodyType ? content[bodyType].schema ?? null : null, bodyType,
      });
    }
  }
  // In a fixed order (the document follows the order routes were registered in, which lazy loading may change).
  ops.sort((a, b) => (a.path === b.path ? a.method.localeCompare(b.method) : a.path < b.path ? -1 : 1));
  const seen = new Set(ops.map((o) => `${o.method} ${o.path}`));
  for (const [method, path] of EXTRA) {
    if (seen.has(`${method} ${path}`)) continue;
    const params = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => ({ name: m[1], in: 'path', type: 'string' }));
    ops.push({ method, path, params, body: method === 'POST' ? { type: 'object', properties: {} } : null, bodyType: method === 'POST' ? 'application/x-www-form-urlencoded' : null });
  }
  return ops;
}

/** A request's seed from the run's seed and its index (one request can be replayed alone). */
export const requestSeed = (seed, i) => (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) + Math.imul(i + 1, 0xc2b2ae35)) >>> 0;

/** encodeURIComponent that also sends lone surrogates (as the invalid UTF-8 bytes of one) instead of throwing. */
function enc(s) {
  try {
    return encodeURIComponent(s);
  } catch {
    return `${encodeURIComponent(s.toWellFormed())}%ED%A0%80`;
  }
}

/** Real values for path parameters in the world (the project `p` chosen for this request). */
function realValue(name, op, p, w, r) {
  const path = op.path;
  const users = Object.values(w.users);
  const destructive = op.method !== 'GET';
  switch (name) {
    case 'id':
      if (path.startsWith('/api/v3/projects/fork/')) return String(w.projects[2].id);
      if (path === '/api/v3/projects/{id}' && op.method === 'DELETE') return String(r.pick(w.spare));
      if (path.startsWith('/api/v3/projects/')) return r.chance(0.8) ? String(p.id) : enc(p.path);
      if (path.startsWith('/api/v3/users/')) return String(destructive ? r.pick([w.users.victim1.id, w.users.victim2.id, w.users.blocked.id]) : r.pick(users).id);
      if (path.startsWith('/api/v3/groups/')) return String(path === '/api/v3/groups/{id}' && op.method === 'DELETE' ? w.spareGroup : r.chance(0.8) ? w.group : 'fuzz-group');
      if (path.startsWith('/api/v3/runners/')) return String(r.chance(0.9) ? w.runner.id : 1);
      if (path.startsWith('/ci/api/v1/builds/')) return String(p.build?.id ?? r.pick(p.builds));
      return String(1 + r.int(5));
    case 'project_id': return String(r.pick(w.spare));
    case 'issue_id': return String(r.pick([p.issue, p.confidential]));
    case 'note_id': return String(path.includes('merge_request') ? p.mrNote : p.note);
    case 'award_id': return String(p.award);
    case 'merge_request_id': return String(p.mr);
    case 'label_id': return String(p.label);
    case 'milestone_id': return String(p.milestone);
    case 'hook_id': return String(p.hook);
    case 'build_id': return String(r.pick(p.builds));
    case 'pipeline_id': return String(p.pipeline);
    case 'runner_id': return String(w.runner.id);
    case 'user_id': return String(r.pick(users).id);
    case 'group_id': return String(w.group);
    case 'token_id': return String(1 + r.int(3));
    case 'key': return p.variable;
    case 'sha': return r.pick([p.sha, p.featureSha, 'master', 'feature', 'v1.0', p.sha.slice(0, 8)]);
    case '*': return r.pick(['master', 'feature', 'v1.0', `fuzz-${r.int(50)}`]);
    case 'ref_name': return r.pick(['master', 'feature', 'v1.0']);
    case 'query': return r.pick(['proj', 'fuzz', 'public']);
    case 'namespace': return p.path.split('/')[0];
    case 'project': return p.path.split('/')[1];
    case 'secret': return 'a'.repeat(32);
    case 'filename': return 'file.txt';
    default: return String(1 + r.int(3));
  }
}

/** A hostile value for a parameter (an id that names nothing, a traversal, a nasty string). */
function hostileValue(r, escape) {
  const k = r.int(4);
  if (k === 0) return r.pick(ODD_IDS);
  if (k === 1) return r.pick(traversals(escape));
  if (k === 2) return r.pick(NASTY);
  return randomText(r, 1 + r.int(20));
}

/** A plausible value of a schema type, or (sometimes) one of the wrong type. */
function schemaValue(schema, name, r, w, p, escape, gentle = false) {
  if (!gentle && r.chance(0.25)) return anyValue(r, escape);
  const type = schema?.type ?? schema?.anyOf?.[0]?.type ?? 'string';
  if (type === 'integer' || type === 'number') {
    const real = [p.id, p.issue, p.mr, p.milestone, p.label, w.group, w.users.developer.id, w.users.stranger.id, 0, 10, 20, 30, 40, 50];
    return gentle || r.chance(0.7) ? r.pick(real) : r.pick([-1, 0, 2 ** 31, 2 ** 53, 1e308, 1.5]);
  }
  if (type === 'boolean') return r.pick([true, false, 'true', '1', 0, 'yes']);
  if (type === 'array') return Array.from({ length: r.int(4) }, () => schemaValue(schema.items, name, r, w, p, escape, gentle));
  if (type === 'object') return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, s]) => [k, schemaValue(s, k, r, w, p, escape, gentle)]));
  const plausible = [
    'master', 'feature', 'v1.0', 'bug', 'src/main.js', 'README.md', 'new/file.txt', p.sha, '2030-01-01', 'text', 'base64',
    `${w.hookUrl}/hook/fuzz`, 'http://127.0.0.1:1/', `fuzz ${name} ${r.int(1e6)}`, `fz-${r.int(1e6)}`, 'thumbsup', 'developer', 'opened', 'closed', 'close', 'reopen',
    '1 week', 'success', 'failed', 'running', `fz-${r.int(1e6)}@fuzz.example.com`, 'PASSWORD-long-enough-1',
  ];
  return gentle || r.chance(0.55) ? r.pick(plausible) : hostileValue(r, escape);
}

/** Headers that say who calls: admin, a developer, a stranger, a blocked user, anonymous, or a broken token. */
function identity(r, w) {
  const k = r.int(20);
  if (k < 7) return { as: 'admin', headers: { 'private-token': w.admin } };
  if (k < 13) return { as: 'developer', headers: r.chance(0.7) ? { 'private-token': w.users.developer.token } : { authorization: `Bearer ${w.pat}` } };
  if (k < 17) return { as: 'anonymous', headers: {} };
  if (k === 17) return { as: 'stranger', headers: { 'private-token': w.users.stranger.token } };
  if (k === 18) return { as: 'blocked', headers: { 'private-token': w.users.blocked.token } };
  return { as: 'garbage', headers: r.pick([{ 'private-token': r.pick(NASTY.filter((s) => /^[\x20-\x7e]*$/.test(s))) }, { sudo: r.pick(['root', '-1', 'fz-victim1', "' OR 1=1", '99999999999999999999']), 'private-token': w.admin }, { authorization: 'Basic Og==' }, { authorization: 'Bearer ' }]) };
}

/** application/x-www-form-urlencoded text of an object (qs-style brackets for nested values). */
function formEncode(obj, prefix = '') {
  const parts = [];
  for (const [k, v] of Object.entries(obj ?? {})) {
    const key = prefix ? `${prefix}[${k}]` : k;
    if (v !== null && typeof v === 'object') parts.push(formEncode(v, key));
    else parts.push(`${enc(key)}=${enc(String(v))}`);
  }
  return parts.filter(Boolean).join('&');
}

/** A multipart body with the fields and a `file` part named with a hostile file name. */
function multipart(fields, r, escape) {
  const boundary = `fuzz${r.int(1e9)}`;
  const name = r.pick([...traversals(escape), 'ok.txt', 'a\u0000b.txt', '', '..', 'x'.repeat(600), 'é.zip', '"quoted".txt', 'new\r\nline']);
  let body = '';
  for (const [k, v] of Object.entries(fields ?? {})) body += `--${boundary}\r\ncontent-disposition: form-data; name="${k}"\r\n\r\n${typeof v === 'object' ? JSON.stringify(v) : String(v)}\r\n`;
  const data = r.chance(0.1) ? 'x'.repeat(200_000) : randomText(r, r.int(200));
  body += `--${boundary}\r\ncontent-disposition: form-data; name="${r.chance(0.85) ? 'file' : 'other'}"; filename="${name}"\r\ncontent-type: application/octet-stream\r\n\r\n${data}\r\n`;
  if (r.chance(0.9)) body += `--${boundary}--\r\n`;
  return { body, type: r.chance(0.9) ? `multipart/form-data; boundary=${boundary}` : 'multipart/form-data' };
}

/** A git smart-HTTP request (advertisement, upload-pack or receive-pack with junk pkt-lines). */
function gitRequest(r, w, p, escape, headers) {
  const repo = r.chance(0.85) ? `/${p.path}.git` : `/${r.pick(traversals(escape)).replace(/^\//, '')}.git`;
  const auth = r.int(4) === 0 ? {} : { authorization: `Basic ${Buffer.from(`${r.pick(['fz-owner', 'fz-developer', 'root', 'x'])}:${r.pick([w.admin, w.users.developer.token, w.users.owner.token, 'wrong'])}`).toString('base64')}` };
  const k = r.int(3);
  if (k === 0) return { method: 'GET', path: `${repo}/info/refs?service=${r.pick(['git-upload-pack', 'git-receive-pack', 'git-upload-archive', '', '../x', '%00'])}`, headers: { ...headers, ...auth }, body: undefined };
  const service = r.pick(['git-upload-pack', 'git-receive-pack']);
  const gz = r.chance(0.1);
  return {
    method: 'POST', path: `${repo}/${service}`, body: junkPktLines(r, p.sha),
    headers: { ...headers, ...auth, 'content-type': r.chance(0.9) ? `application/x-${service}-request` : r.pick(CONTENT_TYPES), ...(gz ? { 'content-encoding': 'gzip' } : {}), ...(r.chance(0.2) ? { 'git-protocol': 'version=2' } : {}) },
  };
}

/**
 * Request `i` of run `seed` against world `w` and operations `ops`: { method, path, headers, body, as, raw? } where
 * body is a string or undefined; `raw` asks the sender to write the request on a socket itself (header injection).
 */
export function makeRequest(seed, i, ops, w, escape) {
  const r = rng(requestSeed(seed, i));
  const p = r.pick(w.projects);
  const who = identity(r, w);
  if (r.chance(0.06)) return { ...gitRequest(r, w, p, escape, who.headers), as: who.as, op: 'git-http' };
  const op = r.pick(ops);
  // A gentle request is plausible everywhere but in one field (real ids, a JSON body, a caller with rights), so that it
  // passes validation and authorization and the hostile value reaches the service behind them.
  const gentle = r.chance(0.4);
  if (gentle && who.as !== 'admin' && who.as !== 'developer') Object.assign(who, { as: 'admin', headers: { 'private-token': w.admin } });
  let path = op.path;
  const query = {};
  const headers = { ...who.headers };
  for (const param of op.params) {
    if (param.in === 'path') {
      const v = gentle || r.chance(0.75) ? realValue(param.name, op, p, w, r) : hostileValue(r, escape);
      path = path.replace(`{${param.name}}`, param.name === '*' && r.chance(0.5) ? v : enc(v));
    } else if (param.in === 'query' && r.chance(0.5)) {
      query[param.name] = param.name === 'token' && p.build ? r.pick([p.build.token, w.runner.token, w.registration, 'wrong']) : schemaValue({ type: param.type }, param.name, r, w, p, escape, gentle);
    } else if (param.in === 'header' && r.chance(0.6)) {
      headers[param.name] = param.name === 'build-token' && p.build ? p.build.token : param.name === 'content-range' ? r.pick(['0-3', '12-20', '-1-5', '5-1', 'bytes=0-', '99999999999999999999-1', 'x']) : 'x';
    }
  }
  if (r.chance(0.05)) query[r.pick(['per_page', 'page', 'sort', 'order_by', 'sudo', 'private_token', 'access_token'])] = hostileValue(r, escape);
  // Headers the daemon reads besides the token: conditional requests, the Host its links are built from, ranges ...
  if (r.chance(0.1)) {
    const value = String(r.pick([...NASTY, ...ODD_IDS, ...traversals(escape)])).replace(/[^\x20-\x7e\t]/g, '?');
    headers[r.pick(['if-none-match', 'if-modified-since', 'host', 'range', 'accept', 'accept-encoding', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'sudo', 'x-request-id', 'origin', 'cookie'])] = value;
  }
  const qs = Object.entries(query).map(([k, v]) => (Array.isArray(v) ? v.map((x) => `${enc(k)}[]=${enc(String(x))}`).join('&') : `${enc(k)}=${enc(typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v))}`)).join('&');
  if (qs) path += `?${qs}`;
  let body;
  if (op.body || ['POST', 'PUT', 'PATCH', 'DELETE'].includes(op.method)) {
    const fields = {};
    for (const [k, s] of Object.entries(op.body?.properties ?? {})) if (r.chance((op.body.required ?? []).includes(k) ? (gentle ? 1 : 0.85) : 0.5)) fields[k] = schemaValue(s, k, r, w, p, escape, gentle);
    if (gentle) {
      const keys = Object.keys(fields);
      if (keys.length) fields[r.pick(keys)] = r.chance(0.5) ? hostileValue(r, escape) : anyValue(r, escape);
    }
    if (op.path.startsWith('/ci/api/') && r.chance(0.7)) fields.token = r.pick([w.runner.token, w.registration, p.build?.token ?? 'x', 'wrong']);
    if (r.chance(0.1)) fields[r.pick(['__proto__', 'constructor', 'admin', 'is_admin', 'id', 'created_at', 'x'.repeat(100)])] = anyValue(r, escape);
    const form = gentle ? (op.bodyType === 'multipart/form-data' ? 0 : 50) : r.int(100);
    if (op.bodyType === 'multipart/form-data' || op.path.endsWith('/artifacts') && op.method === 'POST' ? form < 85 : form < 4) {
      const m = multipart(fields, r, escape);
      body = m.body;
      headers['content-type'] = m.type;
    } else if (form < 66) {
      body = JSON.stringify(fields);
      headers['content-type'] = 'application/json';
    } else if (form < 78) {
      body = formEncode(fields);
      headers['content-type'] = 'application/x-www-form-urlencoded';
    } else if (form < 85) {
      body = r.pick(BAD_JSON);
      headers['content-type'] = 'application/json';
    } else if (form < 88) {
      body = deepJson(r.pick([100, 1000, 10_000, 100_000]), r);
      headers['content-type'] = r.chance(0.8) ? 'application/json' : 'application/x-www-form-urlencoded';
    } else if (form < 90) {
      const big = r.pick([100_000, 1_000_000, 3_000_000]);
      body = r.chance(0.5) ? JSON.stringify({ ...fields, [r.pick(Object.keys(fields).concat('description'))]: 'x'.repeat(big) }) : `${'a[b]='.repeat(big / 5)}`;
      headers['content-type'] = body.startsWith('{') ? 'application/json' : 'application/x-www-form-urlencoded';
    } else {
      body = r.chance(0.5) ? JSON.stringify(fields) : randomText(r, r.int(300));
      headers['content-type'] = r.pick(CONTENT_TYPES);
    }
  }
  if (!gentle && r.chance(0.02)) return { method: op.method, path, headers, body, as: who.as, op: `${op.method} ${op.path}`, raw: r.pick(RAW_TRICKS) };
  if (!gentle && r.chance(0.02)) path = path.replace('/api/v3/', r.pick(['/api/v3//', '/api/v3/./', '/API/V3/', '/api/v3/%2e%2e/', '/api/v3/..%2f']));
  return { method: op.method, path, headers, body, as: who.as, op: `${op.method} ${op.path}` };
}

/** Header-level tricks the sender writes on a raw socket (undici refuses to send them). */
const RAW_TRICKS = ['crlf-header', 'crlf-path', 'bare-cr', 'duplicate-length', 'folded', 'huge-header', 'nul-header', 'bad-version'];
