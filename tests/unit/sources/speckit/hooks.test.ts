// A Spec Kit feature's hooks (lib/sources/speckit/hooks.ts): which are due, once per cycle of work, how the
// agent invokes them; and the loop's choice of the next hook pass (lib/session/hooks.ts).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSpeckitSource } from '../../../../lib/sources/speckit/index.ts';
import { hookInvocation } from '../../../../lib/sources/speckit/hooks.ts';
import type { Tracking } from '../../../../lib/sources/speckit/progress.ts';
import { createHookRuns } from '../../../../lib/session/hooks.ts';
import { copyFixture, emptyProject, info, makeContext } from './helpers.ts';

const FEATURE = path.join('specs', '001-user-auth');
const HOOKS = ['hooks:', '  before_implement:', '  - extension: git', '    command: speckit.git.validate', '    optional: false', '  after_implement:', '  - extension: review', '    command: speckit.review.run', '    optional: false', '  - command: speckit.docs.update', '    optional: false', '  - command: speckit.lint.fix', ''].join('\n');

function project(extensions = HOOKS) {
  const root = copyFixture('user-auth');
  writeFileSync(path.join(root, '.specify', 'extensions.yml'), extensions);
  const source = createSpeckitSource(makeContext(root));
  const tracking = (): Tracking => JSON.parse(readFileSync(path.join(root, FEATURE, 'ralph-tasks.json'), 'utf8')) as Tracking;
  return { root, source, hooks: source.hooks!, tracking };
}

describe('the hooks of a Spec Kit feature', () => {
  it('are due until they pass, in the order of the file; optional ones never are', () => {
    const { hooks, tracking } = project();
    expect(hooks.pending('before').map((hook) => hook.key)).toEqual(['before_implement:speckit.git.validate']);
    expect(hooks.pending('after').map((hook) => hook.name)).toEqual(['after_implement speckit.review.run (review)', 'after_implement speckit.docs.update']);
    const [before] = hooks.pending('before');
    hooks.record(before!, false, 'it failed', info(1));
    expect(hooks.pending('before')).toHaveLength(1);
    hooks.record(before!, true, 'it ran', info(2));
    expect(hooks.pending('before')).toEqual([]);
    const [review, docs] = hooks.pending('after');
    hooks.record(review!, true, 'it ran', info(3));
    expect(tracking().hooks).toEqual({ passed: ['before_implement:speckit.git.validate', 'after_implement:speckit.review.run'], closed: false });
    hooks.record(docs!, true, 'it ran', info(4));
    expect(tracking().hooks?.closed).toBe(true);
    expect(hooks.pending('after')).toEqual([]);
  });

  it('a closed cycle stays closed until work is ahead again: then every hook is due again', () => {
    const { hooks } = project();
    for (const when of ['before', 'after'] as const) for (const hook of hooks.pending(when)) hooks.record(hook, true, 'ran', info(1));
    expect(hooks.pending('after')).toEqual([]);
    expect(hooks.pending('before').map((hook) => hook.command)).toEqual(['speckit.git.validate']);
    expect(hooks.pending('after').map((hook) => hook.command)).toEqual(['speckit.review.run', 'speckit.docs.update']);
  });

  it('a project without extensions.yml has none, and says nothing in the dry run', () => {
    const { hooks } = project('');
    expect(hooks.pending('before')).toEqual([]);
    expect(hooks.describe('claude')).toEqual([]);
  });

  it('a malformed file is a problem of check(), naming the file and the line', async () => {
    const { source } = project('hooks:\n  after_implement:\n  - optional: false\n');
    expect(await source.check()).toContain('.specify/extensions.yml:3: hooks.after_implement[0] has no command');
  });

  it('the dry run marks a hook that passed in this cycle', () => {
    const { hooks } = project();
    hooks.record(hooks.pending('before')[0]!, true, 'ran', info(1));
    expect(hooks.describe('claude')[0]).toBe('hooks before_implement (.specify/extensions.yml), each an agent pass before the first task: /speckit.git.validate (git) (passed in this cycle: not run again)');
  });
});

describe('hookInvocation', () => {
  it("is the command, or the skill's name when the agent has it as a skill", () => {
    const root = emptyProject();
    expect(hookInvocation(root, 'claude', 'speckit.git.commit')).toBe('/speckit.git.commit');
    mkdirSync(path.join(root, '.claude', 'skills', 'speckit-git-commit'), { recursive: true });
    mkdirSync(path.join(root, '.agents', 'skills', 'speckit-git-commit'), { recursive: true });
    expect(hookInvocation(root, 'claude', 'speckit.git.commit')).toBe('/speckit-git-commit');
    expect(hookInvocation(root, 'codex', 'speckit.git.commit')).toBe('$speckit-git-commit');
    expect(hookInvocation(root, 'gemini', 'speckit.git.commit')).toBe('/speckit.git.commit');
  });
});

describe('createHookRuns: the next hook pass', () => {
  it.each([
    ['work ahead: the before hook', 'run', undefined, 'before_implement:speckit.git.validate'],
    ['complete, no --converge: the after hook', 'complete', undefined, 'after_implement:speckit.review.run'],
    ['complete and converged: the after hook', 'complete', { kind: 'end', status: 'completed', exitCode: 0, message: '' }, 'after_implement:speckit.review.run'],
    ['complete, a converge pass to run first: none yet', 'complete', { kind: 'pass', pass: 1 }, undefined],
    ['complete but not proven converged: none', 'complete', { kind: 'end', status: 'limit_reached', exitCode: 2, message: '' }, undefined],
    ['stuck: none', 'stuck', undefined, undefined],
    ['at a limit: none', 'limit', undefined, undefined],
  ] as const)('%s', (_name, decision, step, key) => {
    expect(createHookRuns(project().source).next(decision, step)?.key).toBe(key);
  });
  it('says in the summary what ran', () => {
    const { source, hooks } = project();
    const runs = createHookRuns(source);
    expect(runs.summary()).toEqual({});
    runs.ended(hooks.pending('before')[0]!, 'pass', 1);
    expect(runs.summary()).toEqual({ hooks: [{ name: 'before_implement speckit.git.validate (git)', outcome: 'pass', iteration: 1 }] });
    expect(runs.note()).toBe("; the project's hooks passed: before_implement speckit.git.validate (git)");
  });
});
