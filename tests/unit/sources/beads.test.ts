import { describe, expect, it } from 'vitest';
import { epicTitleForBranch, featureNameFromBranch } from '../../../lib/sources/beads.ts';
import { parseBdArray } from '../../../lib/sources/bd.ts';

describe('branch → epic', () => {
  it.each([
    ['001-ralph-automation', 'Feature: ralph-automation'],
    ['feat/001-ralph-automation', 'Feature: ralph-automation'],
    ['feature/team/012-login-flow', 'Feature: login-flow'],
    ['20260118-101500-timestamped', 'Feature: timestamped'],
    ['no-number', 'Feature: no-number'],
  ])('%s → %s', (branch, title) => expect(epicTitleForBranch(branch)).toBe(title));

  it('keeps names that only start with digits inside', () => {
    expect(featureNameFromBranch('2fa-setup')).toBe('2fa-setup');
  });
});

describe('parseBdArray', () => {
  it('reads arrays and the schema envelope, ignoring unknown fields', () => {
    const issue = { id: 'ws-1', title: 'T', status: 'open', priority: 0, brand_new_field: true, schema_version: 1 };
    expect(parseBdArray(JSON.stringify([issue]), 'bd ready')[0]).toMatchObject({ id: 'ws-1', priority: 0 });
    expect(parseBdArray(JSON.stringify({ schema_version: 1, data: [issue] }), 'bd ready')).toHaveLength(1);
  });

  it('names the command for garbage and wrong shapes', () => {
    expect(() => parseBdArray('{"id": "broken', 'bd ready --parent x')).toThrow(/bd ready --parent x: bd printed invalid JSON/);
    expect(() => parseBdArray('{"id":"x"}', 'bd list')).toThrow(/bd list: expected a JSON array/);
    expect(() => parseBdArray('[{"id":"x"}]', 'bd list')).toThrow(/bd list: item 0 is not a beads issue/);
  });
});
