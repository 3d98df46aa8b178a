/** Request bodies of the authorization matrix that are not JSON: multipart uploads and the git smart-HTTP protocol. */
import { createHash } from 'node:crypto';

/** A multipart/form-data body with one file field. */
export const MULTIPART = (name: string, filename: string, data: string) => ({
  contentType: 'multipart/form-data; boundary=MXB',
  payload: `--MXB\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: text/plain\r\n\r\n${data}\r\n--MXB--\r\n`,
});

const pkt = (line: string) => `${(line.length + 4).toString(16).padStart(4, '0')}${line}`;

/** A smart-HTTP upload-pack request wanting `sha`. */
export function uploadPackRequest(sha: string): { payload: string; contentType: string } {
  return { payload: `${pkt(`want ${sha}\n`)}0000${pkt('done\n')}`, contentType: 'application/x-git-upload-pack-request' };
}

/** A smart-HTTP receive-pack request creating `ref` at the existing commit `sha` (an empty pack: no new objects). */
export function receivePackRequest(sha: string, ref: string): { payload: Buffer; contentType: string } {
  const header = Buffer.from(`${pkt(`${'0'.repeat(40)} ${sha} ${ref}\0report-status\n`)}0000`);
  const body = Buffer.from([0x50, 0x41, 0x43, 0x4b, 0, 0, 0, 2, 0, 0, 0, 0]);
  const sum = createHash('sha1').update(body).digest();
  return { payload: Buffer.concat([header, body, sum]), contentType: 'application/x-git-receive-pack-request' };
}
