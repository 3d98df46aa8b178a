/**
 * Durable file writes: data is fsynced before a write is acknowledged, and new names are made durable by
 * fsyncing their directory. Used by uploads, traces and artifacts (DESIGN.md: a 2xx means the file is on disk).
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { mkdir, open, rename } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';

const tempName = (dir: string) => join(dir, `.tmp-${randomBytes(8).toString('hex')}`);

/** fsync a directory, so entries created or renamed in it survive a crash. */
export async function syncDir(dir: string): Promise<void> {
  const dh = await open(dir, 'r');
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}

/** Synchronous syncDir, for code paths that must finish before returning (trace appends). */
export function syncDirSync(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** fsync an existing file. */
export async function syncFile(file: string): Promise<void> {
  const fh = await open(file, 'r+');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Write `data` to `dir/filename` atomically: a temp file, fsync, rename, fsync of the directory. */
export async function writeFileDurably(dir: string, filename: string, data: Buffer): Promise<void> {
  await mkdir(dir, { recursive: true });
  const temp = tempName(dir);
  const fh = await open(temp, 'wx', 0o640);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(temp, join(dir, filename));
  await syncDir(dir);
}

function writeAllSync(fd: number, data: Buffer): void {
  let written = 0;
  while (written < data.length) written += writeSync(fd, data, written, data.length - written);
  fsyncSync(fd);
}

/** Append `data` to `file` and fsync it (creating it, and making its name durable, when it is new). */
export function appendFileDurablySync(file: string, data: Buffer, isNew: boolean): void {
  if (isNew) mkdirSync(dirname(file), { recursive: true });
  const fd = openSync(file, 'a', 0o640);
  try {
    writeAllSync(fd, data);
  } finally {
    closeSync(fd);
  }
  if (isNew) syncDirSync(dirname(file));
}

/** Replace `file` with `data` atomically and durably (synchronous variant of writeFileDurably). */
export function replaceFileDurablySync(file: string, data: Buffer): void {
  mkdirSync(dirname(file), { recursive: true });
  const temp = tempName(dirname(file));
  const fd = openSync(temp, 'w', 0o640);
  try {
    writeAllSync(fd, data);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
  syncDirSync(dirname(file));
}
