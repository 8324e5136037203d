// The agents a killed run left: stopped by the next start, and forgotten only once they are stopped.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENTS_DIR, recordAgent, stopOrphanedAgent } from '../../../lib/process/agent-pid.ts';
import { groupAlive } from '../../../lib/process/process-tree.ts';
import { tempDir } from '../../support/temp.ts';

describe('stopOrphanedAgent', () => {
  it('keeps the record of an agent until it is stopped: a start killed while stopping it leaves it to the next', async () => {
    const root = tempDir('ralph-agent-pid-');
    // An orphaned agent that ignores SIGTERM (in its own group, as ralph starts agents): stopping it takes the grace period.
    const agent = spawn('bash', ['-c', "trap '' TERM; sleep 30"], { stdio: 'ignore', detached: true });
    const pgid = agent.pid!;
    agent.unref();
    recordAgent(root, pgid);
    const record = path.join(root, AGENTS_DIR, String(pgid));
    const stopping = stopOrphanedAgent(root, 300);
    expect(existsSync(record), 'the record while the agent is being stopped').toBe(true);
    const stopped = await stopping;
    expect(stopped.message).toBe(`stopped the agent (process group ${pgid}) that a killed earlier run left running`);
    expect(groupAlive(pgid)).toBe(false);
    expect(existsSync(record), 'forgotten once stopped').toBe(false);
  });
});
