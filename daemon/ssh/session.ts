/**
 * One SSH session: an exec of git-upload-pack or git-receive-pack runs git on the project's repository after the
 * same access decision as git over HTTP; a shell (`ssh git@host`) gets the welcome line and exit 0; every other
 * command, subsystem (sftp), X11 or agent forwarding is refused with a line saying what Gantry serves.
 */
import type { ChildProcess } from 'node:child_process';
import type { ServerChannel, Session } from 'ssh2';
import type { AppContext } from '../context.js';
import type { ProjectRow, UserRow } from '../db/schema.js';
import { spawnGit } from '../git/command.js';
import type { Repository } from '../git/repository.js';
import { PushProtocolError, readPushCommands } from '../git-http/pkt.js';
import { decideGitAccess } from '../services/repository/git-access.js';
import { lookupProjectAsync } from '../services/projects/projects.js';
import { deferredPushHookSetup, finishReceivePack } from '../services/repository/receive-pack.js';
import { ensureRepository } from '../services/repository/repositories.js';
import { credentialFor, type SshIdentity } from './auth.js';
import { parseSshCommand, printable, SSH_USAGE } from './command.js';
import type { SshConnectionState, SshLog } from './server.js';

/** The line a bare `ssh git@host` prints (GitLab Shell's "Welcome to GitLab, @user!", with Gantry's name). */
export function welcomeLine(identity: SshIdentity): string {
  return identity.user ? `Welcome to Gantry, @${identity.user.username}!` : `Welcome to Gantry, deploy key "${printable(identity.title)}"!`;
}

/** Wire up the requests of one session. */
export function handleSession(ctx: AppContext, session: Session, state: SshConnectionState, log: SshLog): void {
  let pty = false;
  let gitProtocol: string | null = null;
  // No terminal is ever allocated; accepting the request keeps `ssh git@host` from printing "PTY allocation failed".
  session.on('pty', (accept) => {
    pty = true;
    accept?.();
  });
  session.on('window-change', (accept) => accept?.());
  // Only git's protocol version travels in the environment (OpenSSH sends it for git with SendEnv GIT_PROTOCOL).
  session.on('env', (accept, reject, info) => {
    if (info.key === 'GIT_PROTOCOL' && /^version=\d$/.test(String(info.val))) {
      gitProtocol = String(info.val);
      accept?.();
    } else reject?.();
  });
  session.on('x11', (_accept, reject) => reject?.());
  session.on('auth-agent', (_accept, reject) => reject?.());
  session.on('signal', (_accept, reject) => reject?.());
  session.on('shell', (accept) => {
    const channel = accept();
    if (!channel) return;
    channel.write(`${welcomeLine(state.identity!)}${pty ? '\r\n' : '\n'}`);
    channel.exit(0);
    channel.end();
  });
  session.on('subsystem', (accept, _reject, info) => {
    const channel = accept();
    if (channel) refuse(channel, `the ${printable(info.name)} subsystem is not available. ${SSH_USAGE}`);
  });
  session.on('exec', (accept, _reject, info) => {
    const channel = accept();
    if (!channel) return;
    // No reader on the channel until git runs: what the client sends early stays buffered for git.
    runCommand(ctx, channel, info.command, state.identity!, gitProtocol, state, log).catch((e) => {
      log('warn', 'ssh: a git command failed', e);
      refuse(channel, 'the server could not run this git command; try again, and tell an administrator if it keeps failing.');
    });
  });
}

/** End a channel with a refusal on stderr and exit status 1 (git prints it before "Could not read from remote repository"). */
function refuse(channel: ServerChannel, message: string): void {
  if (channel.destroyed) return;
  channel.stderr.write(`Gantry: ${message}\n`);
  channel.exit(1);
  channel.end();
}

/** Count data from the client as activity (the idle timeout); attach it only together with git's reader. */
function activity(channel: ServerChannel, state: SshConnectionState): void {
  channel.on('data', () => {
    state.lastActivity = Date.now();
  });
}

async function runCommand(
  ctx: AppContext,
  channel: ServerChannel,
  command: string,
  identity: SshIdentity,
  gitProtocol: string | null,
  state: SshConnectionState,
  log: SshLog,
): Promise<void> {
  const parsed = parseSshCommand(command);
  if (!parsed.ok) return refuse(channel, parsed.message);
  // (awaited: the key lookup moves to the data layer with the keys room; a synchronous answer is awaited as well)
  const cred = await credentialFor(ctx, identity);
  if (!cred) return refuse(channel, 'this key is no longer registered or its account is blocked; add a key with `gantry ssh-key add` or POST /user/keys.');
  const project = await lookupProjectAsync(ctx, parsed.path);
  const write = parsed.service === 'git-receive-pack';
  const access = await decideGitAccess(ctx, 'ssh', cred, project, write);
  if (!access.ok) return refuse(channel, access.message);
  const repo = await ensureRepository(ctx, project!);
  if (channel.destroyed) return;
  if (write) await receivePack(ctx, channel, project!, access.user!, repo, state, log);
  else uploadPack(channel, repo, gitProtocol, state);
}

/** Connect a git process to the channel: its output to the client, its exit status as the channel's. */
function attach(channel: ServerChannel, child: ChildProcess, state: SshConnectionState, onExit: (code: number) => Promise<void> | void = () => undefined): void {
  child.stdout!.on('data', () => {
    state.lastActivity = Date.now();
  });
  child.stdout!.pipe(channel, { end: false });
  child.stderr!.pipe(channel.stderr, { end: false });
  child.stdin!.on('error', () => undefined);
  let done = false;
  const finish = (code: number) => {
    if (done) return;
    done = true;
    void Promise.resolve(onExit(code)).finally(() => {
      if (channel.destroyed) return;
      channel.exit(code);
      channel.end();
    });
  };
  child.on('error', () => {
    channel.stderr.write('Gantry: git could not be started on the server; tell an administrator.\n');
    finish(1);
  });
  child.on('close', (code) => finish(code ?? 1));
  // The client went away (or the connection timed out): stop git.
  channel.on('close', () => {
    if (child.exitCode === null && child.signalCode === null) child.kill();
  });
  channel.on('error', () => child.kill());
}

function uploadPack(channel: ServerChannel, repo: Repository, gitProtocol: string | null, state: SshConnectionState): void {
  const child = spawnGit(['upload-pack', repo.path], { env: gitProtocol ? { GIT_PROTOCOL: gitProtocol } : {} });
  attach(channel, child, state);
  channel.pipe(child.stdin!);
  activity(channel, state);
}

/**
 * A push: receive-pack starts at once (it advertises the refs first); the client's commands are read from the
 * channel as they pass, branch protection is decided for them and handed to the pre-receive hook before receive-pack
 * sees them; after receive-pack exits, the updates that took effect are processed before the channel closes, so a
 * client that sees its push done also sees its events and pipelines.
 */
async function receivePack(ctx: AppContext, channel: ServerChannel, project: ProjectRow, user: UserRow, repo: Repository, state: SshConnectionState, log: SshLog): Promise<void> {
  const setup = await deferredPushHookSetup(ctx, project, user);
  const child = spawnGit(['receive-pack', repo.path], { config: setup.config, env: setup.env });
  let commands: Awaited<ReturnType<typeof readPushCommands>>['commands'] = [];
  attach(channel, child, state, async () => {
    try {
      await finishReceivePack(ctx, project, user, repo, commands, (err, message) => log('warn', `ssh: ${message}`, err));
    } catch (e) {
      log('warn', 'ssh: push processing failed', e);
    } finally {
      await setup.cleanup();
    }
  });
  let head: Buffer;
  try {
    const reading = readPushCommands(channel);
    activity(channel, state);
    ({ commands, head } = await reading);
  } catch (e) {
    child.kill();
    if (e instanceof PushProtocolError && !channel.destroyed) channel.stderr.write(`Gantry: ${e.message}\n`);
    return;
  }
  await setup.decide(commands);
  child.stdin!.write(head);
  channel.pipe(child.stdin!);
  channel.resume();
}
