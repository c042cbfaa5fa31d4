/**
 * @module test/helpers/tmpfs
 * A small tmpfs mounted for one test (needs root and mount rights; callers skip with the reason
 * when it cannot be mounted), so that "disk full" and "read-only file system" are real.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface Tmpfs {
  dir: string;
  remount(mode: 'ro' | 'rw'): void;
  /** fills the free space with a filler file (bounded by the mount's size); returns its path */
  fill(): string;
  unmount(): void;
}

export function mountTmpfs(sizeMb: number): Tmpfs | string {
  if (process.platform !== 'linux') return 'tmpfs mounts need Linux';
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    fs.rmdirSync(dir);
    return `mount -t tmpfs failed: ${String((err as { stderr?: Buffer }).stderr ?? err).trim()}`;
  }
  return {
    dir,
    remount(mode) {
      execFileSync('mount', ['-o', `remount,${mode}`, dir], { stdio: 'pipe' });
    },
    fill() {
      const file = path.join(dir, 'filler.bin');
      const fd = fs.openSync(file, 'w');
      const chunk = Buffer.alloc(64 * 1024, 1);
      try {
        for (let i = 0; i < sizeMb * 16 + 16; i++) fs.writeSync(fd, chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      } finally {
        fs.closeSync(fd);
      }
      return file;
    },
    unmount() {
      try {
        execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
