/**
 * The built-in SSH server (git over SSH, as Gitea's built-in server: no system sshd, no shell). The TCP port is bound
 * first with node:net, which is quick, so a taken port is known before the daemon says it is ready; the ssh2 module
 * (about 50 ms to load) is imported right after, off the start's critical path, and connections that arrive in the
 * meantime wait for it. Limits: a cap on connections, on those not yet authenticated and on those of them from one
 * client address, a deadline to authenticate, an idle timeout, keepalives; a misbehaving client only ever loses its own
 * connection.
 */
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import type { Connection, Server as Ssh2Server } from 'ssh2';
import { ConfigError } from '../config.js';
import type { AppContext } from '../context.js';
import { authenticateKey, type SshIdentity } from './auth.js';
import { loadOrCreateHostKey } from './host-key.js';
import { handleSession } from './session.js';

/** Where the server reports what an operator may want to know (never keys or other secrets). */
export type SshLog = (level: 'warn' | 'info' | 'debug', message: string, err?: unknown) => void;

/** Timeouts and caps; the defaults suit a public server, tests shorten them. */
export interface SshLimits {
  /** A connection must authenticate within this time (default 1 minute: gitlab-sshd's LoginGraceTime; sshd's is 2). */
  authTimeoutMs: number;
  /** An authenticated connection with no channel data for this long is closed (default 10 minutes). */
  idleTimeoutMs: number;
  /** Connections not yet authenticated, at most (more are closed at once). */
  maxUnauthenticated: number;
  /**
   * Connections not yet authenticated from one client address, at most (more from it are closed at once), so that one
   * address cannot take every slot of maxUnauthenticated and lock everyone else out (as sshd's PerSourceMaxStartups).
   */
  maxUnauthenticatedPerAddress: number;
  /** Connections in all, at most. */
  maxConnections: number;
  /** Sessions (channels) open at once on one connection, at most. */
  maxSessions: number;
  /** Authentication attempts on one connection, at most (OpenSSH's MaxAuthTries is 6; a client offers each key). */
  maxAuthAttempts: number;
  /** On close, running git commands may finish for this long before their connections are cut. */
  drainMs: number;
}

/**
 * The default cap on connections not yet authenticated from one client address: a quarter of maxUnauthenticated, so
 * that a flood of silent connections from one address leaves 96 slots to everyone else, and room for one CI host's
 * burst of parallel clones (20 clones started at once from one address had up to 11 in authentication at a time here;
 * a cap of 10 refused some of them).
 */
export const MAX_UNAUTHENTICATED_PER_ADDRESS = 32;

/** The default limits. */
export const DEFAULT_SSH_LIMITS: SshLimits = {
  authTimeoutMs: 60_000,
  idleTimeoutMs: 10 * 60_000,
  maxUnauthenticated: 128,
  maxUnauthenticatedPerAddress: MAX_UNAUTHENTICATED_PER_ADDRESS,
  maxConnections: 512,
  maxSessions: 10,
  maxAuthAttempts: 20,
  drainMs: 25_000,
};

/** A running SSH server. */
export interface SshServer {
  host: string;
  port: number;
  /** Stop listening; connections running git get up to drainMs to finish (a push is processed), the rest close now. */
  close(): Promise<void>;
}

/** Per-connection state shared by the authentication and session handlers. */
export interface SshConnectionState {
  identity: SshIdentity | null;
  /** Last time a channel moved data (for the idle timeout). */
  lastActivity: number;
  sessions: number;
}

/**
 * Listen for SSH on ctx.config.ssh. Resolves with null when the port is the default one and taken (after a warning:
 * a second daemon on the machine runs without SSH); a port that was given and is taken throws a ConfigError.
 */
export async function startSshServer(ctx: AppContext, log: SshLog, limits: SshLimits = DEFAULT_SSH_LIMITS): Promise<SshServer | null> {
  const { host, port, portGiven } = ctx.config.ssh;
  if (port === null) return null;
  const sockets = new Map<Socket, { authenticated: boolean; timer: NodeJS.Timeout; address: string; state?: SshConnectionState }>();
  let unauthenticated = 0;
  /** Connections not yet authenticated, by client address (an address is gone from the map at 0). */
  const pendingByAddress = new Map<string, number>();
  const pending = (address: string, by: 1 | -1) => {
    const n = (pendingByAddress.get(address) ?? 0) + by;
    if (n > 0) pendingByAddress.set(address, n);
    else pendingByAddress.delete(address);
  };
  let draining = false;
  let ssh2: Ssh2Server | null = null;
  const waiting: Socket[] = [];

  const tcp: NetServer = createServer({ noDelay: true }, (socket) => {
    // remoteAddress is undefined only for a socket already closed by its peer.
    const from = socket.remoteAddress ?? '';
    if (sockets.size >= limits.maxConnections || unauthenticated >= limits.maxUnauthenticated) {
      log('debug', `ssh: too many connections; closed one from ${from}`);
      socket.destroy();
      return;
    }
    if ((pendingByAddress.get(from) ?? 0) >= limits.maxUnauthenticatedPerAddress) {
      log('debug', `ssh: too many connections not yet authenticated from ${from}; closed one`);
      socket.destroy();
      return;
    }
    unauthenticated++;
    pending(from, 1);
    const timer = setTimeout(() => socket.destroy(), limits.authTimeoutMs);
    timer.unref();
    sockets.set(socket, { authenticated: false, timer, address: from });
    socket.on('error', () => undefined);
    socket.once('close', () => {
      const s = sockets.get(socket);
      if (s && !s.authenticated) {
        unauthenticated--;
        pending(s.address, -1);
      }
      if (s) clearTimeout(s.timer);
      sockets.delete(socket);
    });
    if (ssh2) ssh2.injectSocket(socket);
    else waiting.push(socket);
  });
  await listen(tcp, host, port).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'EADDRINUSE' && !portGiven) return null;
    throw listenError(e, host, port);
  });
  if (!tcp.listening) {
    log('warn', `SSH port ${port} on ${host} is already in use (another gantryd?); running without SSH. Choose a free port with --ssh-port (0 picks one) or switch SSH off with --ssh-port off`);
    return null;
  }
  const address = tcp.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;

  /** Mark the TCP socket of an authenticated client: no more auth deadline, and it no longer counts as pending. */
  const authenticated = (ip: string | undefined, remotePort: number | undefined, state: SshConnectionState): Socket | undefined => {
    for (const [socket, s] of sockets) {
      if (s.authenticated || socket.remoteAddress !== ip || socket.remotePort !== remotePort) continue;
      s.authenticated = true;
      s.state = state;
      clearTimeout(s.timer);
      unauthenticated--;
      pending(s.address, -1);
      return socket;
    }
    return undefined;
  };

  // Loaded on the next turn of the event loop: after the daemon printed its ready line.
  const loading = (async () => {
    await new Promise((resolve) => setImmediate(resolve));
    const { Server, utils } = (await import('ssh2')).default;
    const server = new Server({ hostKeys: [loadOrCreateHostKey(ctx.paths.data)], ident: 'Gantry', keepaliveInterval: 30_000, keepaliveCountMax: 3 });
    server.on('connection', (client: Connection, info) => {
      const state: SshConnectionState = { identity: null, lastActivity: Date.now(), sessions: 0 };
      let attempts = 0;
      let idle: NodeJS.Timeout | null = null;
      client.on('error', (err: Error) => log('debug', `ssh: connection from ${info.ip} failed: ${err.message}`));
      client.on('authentication', (auth) => {
        if (++attempts > limits.maxAuthAttempts) {
          auth.reject();
          client.end();
          return;
        }
        try {
          void authenticateKey(ctx, auth, utils.parseKey, (identity) => {
            state.identity = identity;
          }, (e) => log('warn', 'ssh: key lookup failed', e));
        } catch (e) {
          // A failed lookup (a busy database) refuses this attempt; it must never escape into ssh2's packet parser.
          log('warn', 'ssh: key lookup failed', e);
          auth.reject(['publickey']);
        }
      });
      client.on('ready', () => {
        const socket = authenticated(info.ip, info.port, state);
        // Idle: no channel data either way for idleTimeoutMs (keepalives do not count). The socket is destroyed, not
        // ended, so a peer that never closes its side cannot keep it.
        idle = setInterval(() => {
          if (Date.now() - state.lastActivity > limits.idleTimeoutMs) {
            log('debug', `ssh: closed an idle connection from ${info.ip}`);
            socket?.destroy();
            client.end();
          }
        }, Math.min(30_000, limits.idleTimeoutMs / 2));
        idle.unref();
        client.on('session', (accept, reject) => {
          if (draining || state.sessions >= limits.maxSessions) return reject();
          state.sessions++;
          state.lastActivity = Date.now();
          const session = accept();
          session.once('close', () => {
            state.sessions--;
            if (draining && state.sessions === 0) socket?.destroy();
          });
          session.on('error', () => undefined);
          handleSession(ctx, session, state, log);
        });
      });
      // Forwarding of any kind is refused: the server only runs git. Local forwards (direct-tcpip: ssh -L, -W) and
      // socket forwards get no listener, so ssh2 refuses their channels as "administratively prohibited", as sshd with
      // forwarding off (a reject() from a listener would say "connect failed", as if a connection had been tried).
      client.on('request', (_accept, reject) => reject?.());
      client.on('close', () => {
        if (idle) clearInterval(idle);
      });
    });
    return server;
  })();

  loading.then(
    (server) => {
      ssh2 = server;
      for (const socket of waiting.splice(0)) if (!socket.destroyed) server.injectSocket(socket);
    },
    (e) => {
      log('warn', 'ssh: the SSH server could not start; git over SSH is unavailable', e);
      for (const socket of waiting.splice(0)) socket.destroy();
      tcp.close();
    },
  );

  return {
    host,
    port: boundPort,
    close: async () => {
      draining = true;
      await new Promise<void>((resolve) => {
        const cut = setTimeout(() => {
          for (const socket of sockets.keys()) socket.destroy();
        }, limits.drainMs);
        tcp.close(() => {
          clearTimeout(cut);
          resolve();
        });
        for (const [socket, s] of sockets) if (!s.state || s.state.sessions === 0) socket.destroy();
      });
    },
  };
}

function listen(server: NetServer, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** The ConfigError for a port that cannot be bound, worded as the HTTP port's. */
function listenError(e: NodeJS.ErrnoException, host: string, port: number): Error {
  if (e.code === 'EADDRINUSE') return new ConfigError(`SSH port ${port} on ${host} is already in use; stop the other process, choose another port with --ssh-port (0 picks a free one), or switch SSH off with --ssh-port off`);
  if (e.code === 'EACCES') return new ConfigError(`not allowed to listen on ${host}:${port} for SSH; choose a port above 1024 with --ssh-port`);
  if (e.code === 'EADDRNOTAVAIL' || e.code === 'ENOTFOUND') return new ConfigError(`cannot listen for SSH on host ${host}; use an address of this machine with --ssh-host`);
  return e;
}
