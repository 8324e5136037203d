// Temp folders for tests, under the suite's private TMPDIR and removed when the test that made them ends
// (passed or failed), so a run leaves nothing behind (tests/support/global-setup.ts checks).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';

/** A new empty folder `<TMPDIR>/<prefix>XXXXXX`, removed after the current test; call it inside a test. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  try {
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`tempDir('${prefix}') outside a test: make the folder inside the test, or remove it yourself (${(error as Error).message})`);
  }
  return dir;
}
