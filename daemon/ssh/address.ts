/** The SSH address Gantry advertises (ssh_url_to_repo): no ssh2 here, so presenters can import it cheaply. */
import type { SshConfig } from '../config.js';

/** A host and port clients reach the SSH server at. */
export interface SshAddress {
  host: string;
  port: number;
}

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]', '']);

/**
 * What ssh_url_to_repo advertises: --ssh-external-host/port when given; else --ssh-host when it was given and is a
 * real address (not 0.0.0.0 or ::), else the external URL's host; the port the server listens on (22 when SSH is off).
 */
export function advertisedSshAddress(ssh: SshConfig, externalUrl: string, boundPort: number | null): SshAddress {
  const host = ssh.externalHost ?? (ssh.hostGiven && !WILDCARDS.has(ssh.host) ? ssh.host : new URL(externalUrl).hostname);
  return { host, port: ssh.externalPort ?? boundPort ?? 22 };
}

export { sshCloneUrl } from '../web-urls.js';
