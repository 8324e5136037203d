// Who this host is to the others: a name people read (`--host-name`, else the machine's), and an id unique
// per clone (two clones on one machine are two hosts) that stays the same from run to run, so a restarted
// host recognises the claims its killed run left in a shared database.
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import os from 'node:os';

export function hostName(configured: string | undefined): string {
  return configured?.trim() || os.hostname() || 'host';
}

export function hostId(name: string, root: string): string {
  let real = root;
  try {
    real = realpathSync(root);
  } catch {
    // the path as given
  }
  const tag = createHash('sha1').update(real).digest('hex').slice(0, 4);
  return `${name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'host'}-${tag}`;
}
