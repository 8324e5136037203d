import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../support/temp.ts';
import { eventLine } from '../../../lib/progress/event-log.ts';
import { LiveFeed } from '../../../lib/serve/feed.ts';
import { record, sessionStart, summary, T0 } from '../progress/fixtures.ts';

const claim = { task: 'US-002', host: 'host2', clone: '/home/bo/feat', run: 'r2', pid: 7, since: '2026-11-22T02:00:00.000Z', renewedAt: '2026-11-22T02:00:30.000Z', expired: false };

function feed(events: Array<[number, object]>): LiveFeed {
  const root = tempDir('ralph-feed-remote-');
  mkdirSync(path.join(root, '.ralph'), { recursive: true });
  for (const [offset, event] of events) appendFileSync(path.join(root, '.ralph', 'events.jsonl'), eventLine(event as never, T0 + offset, sessionStart.sessionId));
  return new LiveFeed(root, { control: false, now: () => T0 + 60_000 });
}

describe('LiveFeed and --remote', () => {
  it('no remote: nothing about one', () => {
    const live = feed([[0, sessionStart]]);
    expect(live.state().remote).toBeNull();
    expect(live.sessionRemote()).toBeUndefined();
  });

  it("knows the run's remote from its start, and shows the claims the watch read", () => {
    const live = feed([[0, { ...sessionStart, remote: { name: 'origin', branch: 'feat', host: 'host1' } }]]);
    expect(live.sessionRemote()).toEqual({ name: 'origin', branch: 'feat', host: 'host1' });
    const before = live.changes;
    live.setRemote({ name: 'origin', branch: 'feat', claims: [claim] });
    expect(live.changes).toBeGreaterThan(before);
    expect(live.state().remote).toEqual({ name: 'origin', branch: 'feat', claims: [claim], error: null, landed: null });
    live.setRemote({ name: 'origin', branch: 'feat', claims: [], error: 'origin does not answer (connection refused)' });
    expect(live.state().remote).toMatchObject({ claims: [], error: 'origin does not answer (connection refused)' });
  });

  it('once the run ended: who landed what, even before (or without) a look at the claims', () => {
    const remote = { name: 'origin', branch: 'feat', host: 'host1', landedHere: 1, landedElsewhere: 2 };
    const live = feed([
      [0, sessionStart],
      [1000, { type: 'session_end', summary: summary({ remote, records: [record({ tasksDone: ['US-001'] })] }) }],
    ]);
    expect(live.state().remote).toEqual({ name: 'origin', branch: 'feat', claims: [], error: null, landed: 'landed here 1 (US-001), by other hosts 2 on origin/feat' });
  });
});
