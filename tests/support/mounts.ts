// Faults made for real in a private mount namespace (unshare -m): a small tmpfs that fills up (ENOSPC), a
// read-only bind mount (EROFS). They need root (or the right to make namespaces): where that is missing,
// the tests that use them are reported as skipped with the reason, like a missing Debian tool.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findOnPath } from '../../lib/process/zx.ts';

export interface MountSupport {
  skip: boolean;
  reason: string;
  title(text: string): string;
}

let probed: MountSupport | undefined;

/** Whether this machine lets a test mount a tmpfs in a private mount namespace (probed once per worker). */
export function mountNamespaces(): MountSupport {
  if (probed) return probed;
  let reason = '';
  const unshare = findOnPath('unshare', process.env);
  if (!unshare) reason = 'unshare not found on PATH: install it with `apt-get install -y util-linux`';
  else {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ralph-mount-probe-'));
    try {
      execFileSync(unshare, ['-m', 'sh', '-c', 'mount -t tmpfs -o size=64k tmpfs "$1"', 'sh', dir], { stdio: 'ignore', timeout: 10_000 });
    } catch {
      reason = 'a private mount namespace with a tmpfs needs root (unshare -m; mount -t tmpfs)';
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const required = (process.env.RALPH_REQUIRE_TOOLS ?? '').split(/[\s,]+/).includes('unshare');
  const skip = reason !== '' && !required;
  if (skip) console.warn(`skipped: the tests that fill a disk or make it read-only (${reason})`);
  probed = { skip, reason, title: (text) => (skip ? `${text} [skipped: ${reason}]` : text) };
  return probed;
}
