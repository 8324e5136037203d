import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it, expect } from 'vitest';
import { branchPrefix, resolveFeature, resolveFeatureIn, type FeatureDir, type ResolveInput } from '../../../../lib/sources/speckit/resolve.ts';
import { emptyProject } from './helpers.ts';

const ROOT = '/repo';
const FEATURES: FeatureDir[] = [
  { name: '001-user-auth', hasTasks: true },
  { name: '002-payments', hasTasks: true },
  { name: '003-reports', hasTasks: false },
  { name: '004-search', hasTasks: true },
  { name: '20260118-101500-bulk-import', hasTasks: true },
];

function input(overrides: Partial<ResolveInput> = {}): ResolveInput {
  const features = overrides.features ?? FEATURES;
  const dirs = new Set(features.map((feature) => path.join(ROOT, 'specs', feature.name)));
  return { root: ROOT, env: {}, features, isDir: (dir) => dirs.has(dir), ...overrides };
}

function resolved(value: ReturnType<typeof resolveFeature>): { rel: string; via: string } | string {
  return value.ok ? { rel: value.feature.rel, via: value.feature.via } : value.problem;
}

describe('resolveFeature: each rule', () => {
  it('1. the feature option, by name, by number prefix, by path and by tasks.md path', () => {
    expect(resolved(resolveFeature(input({ option: '002-payments' })))).toEqual({ rel: 'specs/002-payments', via: 'option' });
    expect(resolved(resolveFeature(input({ option: '002' })))).toEqual({ rel: 'specs/002-payments', via: 'option' });
    expect(resolved(resolveFeature(input({ option: 'specs/004-search' })))).toEqual({ rel: 'specs/004-search', via: 'option' });
    expect(resolved(resolveFeature(input({ option: '/repo/specs/004-search/tasks.md' })))).toEqual({ rel: 'specs/004-search', via: 'option' });
  });

  it('2. SPECIFY_FEATURE_DIRECTORY, relative or absolute', () => {
    expect(resolved(resolveFeature(input({ env: { SPECIFY_FEATURE_DIRECTORY: 'specs/002-payments' } })))).toEqual({ rel: 'specs/002-payments', via: 'SPECIFY_FEATURE_DIRECTORY' });
    expect(resolved(resolveFeature(input({ env: { SPECIFY_FEATURE_DIRECTORY: '/repo/specs/001-user-auth' } })))).toEqual({ rel: 'specs/001-user-auth', via: 'SPECIFY_FEATURE_DIRECTORY' });
  });

  it('3. .specify/feature.json', () => {
    expect(resolved(resolveFeature(input({ featureJson: '{"feature_directory":"specs/004-search"}' })))).toEqual({ rel: 'specs/004-search', via: 'feature.json' });
  });

  it('4. the branch prefix: numeric, with a folder, or a timestamp', () => {
    expect(resolved(resolveFeature(input({ branch: '002-payments' })))).toEqual({ rel: 'specs/002-payments', via: 'branch' });
    expect(resolved(resolveFeature(input({ branch: 'feat/004-x' })))).toEqual({ rel: 'specs/004-search', via: 'branch' });
    expect(resolved(resolveFeature(input({ branch: '20260118-101500-bulk-import' })))).toEqual({ rel: 'specs/20260118-101500-bulk-import', via: 'branch' });
  });

  it('5. the only feature with a tasks.md', () => {
    const features = [
      { name: '001-user-auth', hasTasks: false },
      { name: '002-payments', hasTasks: true },
    ];
    expect(resolved(resolveFeature(input({ features, branch: 'main' })))).toEqual({ rel: 'specs/002-payments', via: 'only feature' });
  });

  it('5b. a lone feature without tasks.md is still found (check() then asks for /speckit.tasks)', () => {
    expect(resolved(resolveFeature(input({ features: [{ name: '001-x', hasTasks: false }] })))).toEqual({ rel: 'specs/001-x', via: 'only feature' });
  });
});

describe('resolveFeature: order', () => {
  const all = { option: '001-user-auth', env: { SPECIFY_FEATURE_DIRECTORY: 'specs/002-payments' }, featureJson: '{"feature_directory":"specs/004-search"}', branch: '20260118-101500-x' };

  it('the option beats the environment, which beats feature.json, which beats the branch', () => {
    expect(resolved(resolveFeature(input(all)))).toMatchObject({ via: 'option' });
    expect(resolved(resolveFeature(input({ ...all, option: undefined })))).toMatchObject({ via: 'SPECIFY_FEATURE_DIRECTORY' });
    expect(resolved(resolveFeature(input({ ...all, option: undefined, env: {} })))).toMatchObject({ via: 'feature.json', rel: 'specs/004-search' });
    expect(resolved(resolveFeature(input({ ...all, option: '  ', env: { SPECIFY_FEATURE_DIRECTORY: '' }, featureJson: undefined })))).toMatchObject({ via: 'branch' });
  });

  it('the older SPECIFY_FEATURE counts after feature.json and before the branch', () => {
    expect(resolved(resolveFeature(input({ env: { SPECIFY_FEATURE: '002-payments' }, branch: '004-search' })))).toMatchObject({ via: 'SPECIFY_FEATURE', rel: 'specs/002-payments' });
    expect(resolved(resolveFeature(input({ env: { SPECIFY_FEATURE: '002-payments' }, featureJson: '{"feature_directory":"specs/004-search"}' })))).toMatchObject({ via: 'feature.json' });
  });

  it('a branch without a matching feature falls through to the next rule', () => {
    const features = [{ name: '001-user-auth', hasTasks: true }];
    expect(resolved(resolveFeature(input({ features, branch: '009-other' })))).toEqual({ rel: 'specs/001-user-auth', via: 'only feature' });
  });

  it('feature.json without feature_directory falls through', () => {
    expect(resolved(resolveFeature(input({ featureJson: '{}', branch: '004-x' })))).toMatchObject({ via: 'branch' });
  });
});

describe('resolveFeature: errors', () => {
  it('several features with tasks.md and nothing else to go on lists the candidates', () => {
    const problem = resolved(resolveFeature(input({ branch: 'main' })));
    expect(problem).toBe(
      'cannot tell which feature to work on: several have a tasks.md: specs/001-user-auth, specs/002-payments, specs/004-search, specs/20260118-101500-bulk-import; pass --feature NAME, set SPECIFY_FEATURE_DIRECTORY, or check out the feature\'s branch',
    );
  });

  it('a branch prefix matching several features lists them', () => {
    const features = [
      { name: '005-a', hasTasks: true },
      { name: '005-b', hasTasks: true },
    ];
    expect(resolved(resolveFeature(input({ features, branch: '005-a-fix' })))).toBe('branch 005-a-fix matches several features: specs/005-a, specs/005-b; pass --feature NAME');
  });

  it('an option prefix matching several features lists them', () => {
    const features = [
      { name: '005-a', hasTasks: true },
      { name: '005-b', hasTasks: true },
    ];
    expect(resolved(resolveFeature(input({ features, option: '005' })))).toBe('--feature "005" matches several features: specs/005-a, specs/005-b; give the full folder name');
  });

  it('an explicit setting that points nowhere is an error naming where it came from', () => {
    expect(resolved(resolveFeature(input({ option: '999-nope' })))).toMatch(/^--feature "999-nope" is not a feature folder \(looked for 999-nope\); features found: specs\/001-user-auth/);
    expect(resolved(resolveFeature(input({ env: { SPECIFY_FEATURE_DIRECTORY: 'specs/gone' } })))).toMatch(/^SPECIFY_FEATURE_DIRECTORY "specs\/gone" is not a feature folder/);
    expect(resolved(resolveFeature(input({ featureJson: '{"feature_directory":"specs/gone"}' })))).toMatch(/^\.specify\/feature.json feature_directory "specs\/gone" is not a feature folder/);
  });

  it('malformed feature.json is an error', () => {
    expect(resolved(resolveFeature(input({ featureJson: '{oops' })))).toMatch(/^\.specify\/feature.json is not valid JSON .*: fix it, or pass --feature NAME$/);
  });

  it('no features at all says which Spec Kit commands to run', () => {
    expect(resolved(resolveFeature(input({ features: [] })))).toMatch(/no Spec Kit feature found: specs\/ has no feature folders; run \/speckit.specify/);
  });

  it('several features and none with tasks.md asks for /speckit.tasks', () => {
    const features = [
      { name: '001-a', hasTasks: false },
      { name: '002-b', hasTasks: false },
    ];
    expect(resolved(resolveFeature(input({ features })))).toBe('no feature has a tasks.md yet (specs/001-a, specs/002-b): run /speckit.tasks for the feature first');
  });
});

describe('branchPrefix', () => {
  it.each([
    ['001-user-auth', '001'],
    ['feat/004-x', '004'],
    ['users/me/12-thing', '12'],
    ['20260118-101500-bulk-import', '20260118-101500'],
    ['main', undefined],
    ['release-1.0', undefined],
  ])('%s → %s', (branch, prefix) => {
    expect(branchPrefix(branch)).toBe(prefix);
  });
});

describe('resolveFeatureIn reads the project', () => {
  it('lists specs/*, reads .specify/feature.json and takes the environment', () => {
    const root = emptyProject();
    for (const name of ['001-a', '002-b']) {
      mkdirSync(path.join(root, 'specs', name), { recursive: true });
      writeFileSync(path.join(root, 'specs', name, 'tasks.md'), '- [ ] T001 x\n');
    }
    writeFileSync(path.join(root, 'specs', 'README.md'), 'not a folder');
    expect(resolveFeatureIn(root, { env: {} })).toMatchObject({ ok: false });
    mkdirSync(path.join(root, '.specify'));
    writeFileSync(path.join(root, '.specify', 'feature.json'), '{"feature_directory":"specs/002-b"}');
    expect(resolveFeatureIn(root, { env: {} })).toMatchObject({ ok: true, feature: { name: '002-b', rel: 'specs/002-b', dir: path.join(root, 'specs', '002-b') } });
    expect(resolveFeatureIn(root, { env: { SPECIFY_FEATURE_DIRECTORY: path.join(root, 'specs', '001-a') } })).toMatchObject({ ok: true, feature: { name: '001-a', via: 'SPECIFY_FEATURE_DIRECTORY' } });
    expect(resolveFeatureIn(root, { env: {}, option: '001' })).toMatchObject({ ok: true, feature: { name: '001-a', via: 'option' } });
  });
});
