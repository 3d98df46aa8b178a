// The floor of the API benchmarks: a bare Fastify process answering, for each path it was given (any method), exactly the bytes
// (status, content type, body) Gantry answered for it, with no database, authentication or presenter. Run as a child
// process: `node reference-server.mjs <responses.json>`, where the file maps a path to { status, type, body (base64) };
// it prints `listening on <url>` when ready.
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const responses = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const app = Fastify({ logger: false });
const byPath = new Map(Object.entries(responses).map(([path, r]) => [path, { ...r, body: Buffer.from(r.body, 'base64') }]));
// Any method: a POST, PUT or PATCH gets the bytes its path was answered with (its body is read and dropped).
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
app.all('/*', async (request, reply) => {
  const r = byPath.get(request.url);
  if (!r) return reply.code(404).send({ message: '404 Not Found' });
  if (r.type) reply.type(r.type);
  return reply.code(r.status).send(r.status === 204 ? undefined : r.body);
});
const url = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`listening on ${url}\n`);
