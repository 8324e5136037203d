import { describe, expect, it } from 'vitest';
import { claimLines, landedText, leftBehindText, leftByThisClone, liveClaims } from '../../../lib/landing/view-text.ts';
import type { ClaimView, RemoteView } from '../../../lib/landing/view.ts';

// Local time is UTC in the suite (TZ), so the clock reads as written.
const NOW = Date.parse('2026-11-26T12:10:00.000Z');
const claim = (overrides: Partial<ClaimView> = {}): ClaimView => ({
  task: 'US-002',
  host: 'host2',
  clone: '/home/bo/feat',
  run: '20261126-120000',
  pid: 4242,
  since: '2026-11-26T12:06:55.000Z',
  renewedAt: '2026-11-26T12:09:40.000Z',
  expired: false,
  ...overrides,
});
const view = (overrides: Partial<RemoteView> = {}): RemoteView => ({ name: 'origin', branch: 'feat', claims: [], ...overrides });

describe('claimLines', () => {
  it.each<[string, RemoteView, string[]]>([
    ['no claim', view(), ['claims on origin/feat: none']],
    ['a remote that does not answer: one line', view({ error: 'origin does not answer (connection refused)' }), ['claims on origin/feat: cannot be read: origin does not answer (connection refused)']],
    [
      'a live claim: task, host, pid, clone, since (clock and how long ago), last renewal',
      view({ claims: [claim()] }),
      ['claims on origin/feat:', '  US-002 held by host2 (pid 4242, /home/bo/feat) since 12:06:55 (3m 05s ago), renewed 20.0s ago'],
    ],
    [
      'an expired claim says so, and for how long it was not renewed',
      view({ claims: [claim({ task: 'US-003', renewedAt: '2026-11-26T11:58:00.000Z', since: '2026-11-26T11:50:00.000Z', expired: true })] }),
      ['claims on origin/feat:', '  US-003 held by host2 (pid 4242, /home/bo/feat) since 11:50:00 (20m 00s ago), renewed 12m 00s ago; expired (not renewed for 12m 00s): another host may take it over'],
    ],
  ])('%s', (_name, shown, lines) => {
    expect(claimLines(shown, NOW)).toEqual(lines);
  });

  it("tells this clone's own claims apart", () => {
    expect(claimLines(view({ claims: [claim()] }), NOW, '/home/bo/feat')[1]).toContain('(pid 4242, /home/bo/feat, this clone)');
    expect(claimLines(view({ claims: [claim()] }), NOW, '/home/ann/feat')[1]).not.toContain('this clone');
  });

  it('a claim made on a clock ahead of this one is not "-3s ago"', () => {
    expect(claimLines(view({ claims: [claim({ since: '2026-11-26T12:10:03.000Z', renewedAt: '2026-11-26T12:10:03.000Z' })] }), NOW)[1]).toContain('(0ms ago), renewed 0ms ago');
  });
});

describe('liveClaims', () => {
  it('the tasks of the claims that are not expired', () => {
    expect([...liveClaims(view({ claims: [claim(), claim({ task: 'US-003', expired: true })] }))]).toEqual(['US-002']);
  });
});

describe('landedText', () => {
  const remote = { name: 'origin', branch: 'feat', host: 'host1', landedHere: 2, landedElsewhere: 3 };
  it.each<[string, readonly string[], string]>([
    ['with the tasks this host landed', ['US-001', 'US-004'], 'landed here 2 (US-001, US-004), by other hosts 3 on origin/feat'],
    ['without them', [], 'landed here 2, by other hosts 3 on origin/feat'],
  ])('%s', (_name, landed, text) => {
    expect(landedText(remote, landed)).toBe(text);
  });
});

describe('the claims a dead run of this clone left (what --dry-run says recovery releases)', () => {
  const here = { clone: '/home/ann/feat', host: 'host1' };
  it.each([
    ['this clone, this host: a dead run\'s (the lock is free)', [claim({ task: 'US-001', ...here })], ['US-001']],
    ['expired or not, it is this clone\'s to release', [claim({ task: 'US-001', ...here, expired: true }), claim({ task: 'US-003', ...here })], ['US-001', 'US-003']],
    ['another host\'s claim on a clone at the same path', [claim({ task: 'US-001', clone: here.clone, host: 'host2' })], []],
    ['another clone of this host', [claim({ task: 'US-001', clone: '/home/ann/other', host: 'host1' })], []],
    ['none', [], []],
  ])('%s', (_what, claims, tasks) => {
    expect(leftByThisClone(claims, here.clone, here.host)).toEqual(tasks);
  });

  it('says it as the run does', () => {
    expect(`release ${leftBehindText(['US-001'])}`).toBe('release the claim a killed run of this clone left on US-001');
    expect(`released ${leftBehindText(['US-001', 'US-002'])}`).toBe('released the claims a killed run of this clone left on US-001, US-002');
  });
});
