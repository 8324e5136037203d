// .specify/extensions.yml as Spec Kit writes it (PyYAML's block style) and as people edit it: which hooks
// ralph runs, lists or leaves, and one error naming the file and line for anything it cannot read.
import { describe, expect, it } from 'vitest';
import { readExtensionHooks } from '../../../../lib/sources/speckit/extensions.ts';
import { parseYaml } from '../../../../lib/sources/speckit/yaml.ts';

const FILE = '.specify/extensions.yml';
const read = (lines: string[]) => readExtensionHooks(`${lines.join('\n')}\n`, FILE);
const names = (hooks: Array<{ command: string }>) => hooks.map((hook) => hook.command);

// The shape `specify extension add` leaves (yaml.dump, default_flow_style=False, sort_keys=False).
const WRITTEN = [
  'installed:',
  '- git',
  '- review',
  'settings:',
  '  auto_execute_hooks: true',
  'hooks:',
  '  before_implement:',
  '  - extension: git',
  '    command: speckit.git.commit',
  '    enabled: true',
  '    optional: true',
  '    priority: 10',
  '    prompt: Commit outstanding changes before implementation?',
  "    description: ''",
  '    condition: null',
  '  - extension: git',
  '    command: speckit.git.validate',
  '    enabled: true',
  '    optional: false',
  '    priority: 10',
  '    prompt: Execute speckit.git.validate?',
  '    description: Check that the branch is a feature branch before any work, a long description that',
  '      PyYAML folds onto a second line',
  '    condition: null',
  '  after_implement:',
  '  - extension: review',
  '    command: speckit.review.run',
  '    enabled: true',
  '    optional: false',
  '    description: "Review the work: code and tests"',
  '    condition: null',
  '  - extension: review',
  '    command: speckit.review.deep',
  '    enabled: false',
  '    optional: false',
  '  - extension: jira',
  '    command: speckit.jira.sync',
  '    optional: false',
  '    condition: env.JIRA_TOKEN is set',
  '  after_tasks:',
  '  - extension: jira',
  '    command: speckit.jira.issues',
  '    optional: false',
];

describe('readExtensionHooks', () => {
  it('reads the file Spec Kit writes: mandatory hooks run, optional ones listed, disabled ones dropped, conditional ones left', () => {
    const hooks = read(WRITTEN);
    expect(names(hooks.before_implement.mandatory)).toEqual(['speckit.git.validate']);
    expect(names(hooks.before_implement.optional)).toEqual(['speckit.git.commit']);
    expect(hooks.before_implement.optional[0]).toMatchObject({ extension: 'git', prompt: 'Commit outstanding changes before implementation?', line: 8 });
    expect(hooks.before_implement.mandatory[0]!.description).toBe('Check that the branch is a feature branch before any work, a long description that PyYAML folds onto a second line');
    expect(names(hooks.after_implement.mandatory)).toEqual(['speckit.review.run']);
    expect(hooks.after_implement.mandatory[0]!.description).toBe('Review the work: code and tests');
    expect(hooks.after_implement.conditional).toMatchObject([{ command: 'speckit.jira.sync', condition: 'env.JIRA_TOKEN is set' }]);
  });

  it('reads hand-written files: indented lists, one hook as a mapping, comments, no optional (optional by default)', () => {
    const hooks = read(['# project hooks', 'hooks:', '  after_implement:', '    extension: cleanup   # one hook', '    command: speckit.cleanup.run', '    optional: false', '  before_implement:', '    - command: speckit.lint.check']);
    expect(names(hooks.after_implement.mandatory)).toEqual(['speckit.cleanup.run']);
    expect(names(hooks.before_implement.optional)).toEqual(['speckit.lint.check']);
  });

  it('an empty file, or one without hooks, has none', () => {
    expect(read(['']).after_implement).toEqual({ mandatory: [], optional: [], conditional: [] });
    expect(read(['installed: []', 'settings: {}', 'hooks: {}']).before_implement.mandatory).toEqual([]);
  });

  it.each([
    ['a tab in the indentation', ['hooks:', '\tafter_implement: []'], ':2: a tab in the indentation'],
    ['a line indented too deep', ['hooks:', '  after_implement:', '  - command: speckit.a.b', '      optional: false'], ':4: indented deeper than the mapping it belongs to'],
    ['a quote never closed', ['hooks:', '  after_implement:', '  - command: "speckit.a.b', 'settings: {}'], ':3: a quoted value that is never closed'],
    ['a hook without a command', ['hooks:', '  after_implement:', '  - extension: x', '    optional: false'], ':3: hooks.after_implement[0] has no command'],
    ['optional that is not a boolean', ['hooks:', '  before_implement:', '  - command: speckit.a.b', '    optional: sometimes'], ':4: hooks.before_implement[0].optional must be true or false'],
    ['a key written twice', ['hooks:', '  after_implement: []', '  after_implement: []'], ':3: the key "after_implement" is written twice'],
    ['an anchor', ['hooks:', '  after_implement: &hooks', '  - command: speckit.a.b'], ':2: ralph reads plain YAML only'],
    ['hooks as a list', ['hooks:', '- command: speckit.a.b'], ':2: "hooks" must be a mapping'],
    ['a command that is not an id', ['hooks:', '  after_implement:', '  - command: rm -rf /'], ':3: hooks.after_implement[0].command "rm -rf /" is not a command id'],
    ['a line that is no entry', ['hooks:', '  after_implement', '  - command: speckit.a.b'], ':2: "after_implement" is not a "key: value" line'],
  ])('%s: one line naming the file and the line', (_name, lines, message) => {
    expect(() => read(lines)).toThrow(`${FILE}${message}`);
  });
});

describe('parseYaml', () => {
  it('reads scalars as YAML does: quotes, escapes, null, booleans, numbers', () => {
    const node = parseYaml("a: 'it''s'\nb: \"tab\\tx \\u00e9\"\nc: ~\nd: False\ne: 10\nf: [git, 'x y']\n");
    expect(node?.kind).toBe('map');
    const values = node?.kind === 'map' ? [...node.entries.values()].map((entry) => (entry.value.kind === 'scalar' ? entry.value.value : entry.value.kind === 'seq' ? entry.value.items.map((item) => (item.kind === 'scalar' ? item.value : '?')) : '?')) : [];
    expect(values).toEqual(["it's", 'tab\tx é', null, false, 10, ['git', 'x y']]);
  });
});
