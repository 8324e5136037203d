import { describe, expect, it } from 'vitest';
import { dependenciesOf } from '../../../../lib/sources/speckit/dependencies.ts';
import { abbreviates, descriptionKey, readCheckbox, readTaskLine, sameDescription, summarizes } from '../../../../lib/sources/speckit/task-line.ts';

describe('readCheckbox', () => {
  it.each([
    ['- [ ] a', 'open'],
    ['- [] a', 'open'],
    ['-[ ]a', 'open'],
    ['* [x] a', 'done'],
    ['+ [X] a', 'done'],
    ['1. [✅] a', 'done'],
    ['- [✔️] a', 'done'],
    ['- [-] a', 'unknown'],
    ['- [⚠️] a', 'unknown'],
    ['> - [ ] a', 'open'],
  ])('%s → %s', (line, state) => {
    expect(readCheckbox(line)?.state).toBe(state);
  });

  it.each(['- [P] tasks = different files', '- [US1] story', '- [2026-01-29] dated', '[ ] no bullet', '- [link](https://example.test)', 'text - [ ] later', '- [ ] a\rb', '- [x] a\u2028b'])('%s is no checkbox', (line) => {
    expect(readCheckbox(line)).toBeUndefined();
  });

  // The common forms are read without the pattern; these pin that both readings agree on the edges.
  it.each([
    ['- [ ] T001 Create', { state: 'open', box: ' ', rest: 'T001 Create', quoted: false }],
    ['  -   [x]   T001 Create  ', { state: 'done', box: 'x', rest: 'T001 Create', quoted: false }],
    ['+ [X]\tT001\u00a0', { state: 'done', box: 'X', rest: 'T001', quoted: false }],
    ['\t- [ ] T001 tab-indented', { state: 'open', box: ' ', rest: 'T001 tab-indented', quoted: false }],
    ['-\t[ ] T001 tab after the bullet', { state: 'open', box: ' ', rest: 'T001 tab after the bullet', quoted: false }],
    ['- [ ]', { state: 'open', box: ' ', rest: '', quoted: false }],
    ['> - [x] quoted', { state: 'done', box: 'x', rest: 'quoted', quoted: true }],
  ])('%j reads as %j', (line, expected) => {
    expect(readCheckbox(line)).toEqual(expected);
  });
});

describe('readTaskLine', () => {
  it.each([
    ['- [ ] T001 Create', 'T001', ' Create'],
    ['- [x] **T001** Create', 'T001', ' Create'],
    ['- [ ] T001: Create', 'T001', ': Create'],
    ['- [ ] T001. Create', 'T001', '. Create'],
    ['- [x] T129A[P][US2] Test', 'T129A', '[P][US2] Test'],
    ['  - [ ] T102.1 Queue', 'T102.1', ' Queue'],
    ['- [ ] T090.12 Render', 'T090.12', ' Render'],
    ['- [ ] T10000 Wide', 'T10000', ' Wide'],
  ])('%s → %s', (line, id, after) => {
    expect(readTaskLine(line)).toMatchObject({ kind: 'task', id, after });
  });

  it.each([
    ['- [ ] T01 Short', /the id T01 has 2 digits/],
    ['- [x] T00 [P] Model', /the id T00 has 2 digits/],
    ['- [ ] T001Create glued', /T001Create is not an id ralph can read/],
  ])('%s is malformed', (line, why) => {
    const found = readTaskLine(line);
    expect(found?.kind).toBe('malformed');
    expect(found && 'why' in found ? found.why : '').toMatch(why);
  });

  it('ignores checkboxes that do not start with an id', () => {
    expect(readTaskLine('- [ ] [SETUP-001] Create')).toBeUndefined();
    expect(readTaskLine('- [ ] TXXX placeholder')).toBeUndefined();
    expect(readTaskLine('- [ ] The T001 task')).toBeUndefined();
  });
});

describe('descriptions of repeated lines', () => {
  it('drops markers, emphasis, completion notes and case', () => {
    expect(descriptionKey('[P] [US1] Write the **CSV** exporter in `src/csv.ts` - **COMPLETED**')).toBe('write the csv exporter in src/csv.ts');
    expect(descriptionKey(': Write the exporter ✅')).toBe('write the exporter');
  });

  it('matches a summary line cut short, but not a different task', () => {
    expect(sameDescription('[P] Add the lint configuration in eslint.config.js', '[P] Add the lint configuration')).toBe(true);
    expect(sameDescription('Create the release workflow', 'Configure the tag trigger')).toBe(false);
    expect(sameDescription('Add tests', 'Add tests for the parser')).toBe(false);
  });
});

describe('dependenciesOf with suffixed and dotted ids', () => {
  it.each([
    ['Render (depends on T002a)', ['T002a']],
    ['Retry (depends on T102.1, T102.2)', ['T102.1', 'T102.2']],
    ['Ship (depends on T010-T012).', ['T010', 'T011', 'T012']],
    ['Ship (blocked by T129A and T130)', ['T129A', 'T130']],
  ])('%s', (text, expected) => {
    expect(dependenciesOf(text)).toEqual(expected);
  });
});

describe('abbreviated descriptions (a summary row of short titles, issue 35)', () => {
  const original = 'Add i18n authentication keys to src/languages/common.json (auth.username, auth.login) - verify no duplicates exist';
  it.each([
    ['a few words of the original, code names split', 'i18n common.json keys', original, true],
    ['a word cut to its start (auth of authentication)', 'App.vue auth check', 'Add authentication check in src/App.vue onMounted hook', true],
    ['US1 read as User Story 1', 'Test US1 independently', 'Test User Story 1 independently: open the app, sign in', true],
    ['the same description cut short', 'Add the lint configuration', '[P] Add the lint configuration in eslint.config.js', true],
    ['a word the original does not have', 'i18n errors.json keys', original, false],
    ['a different task', 'Tag the release', 'Create the app in src/app.ts', false],
    ['saying more than the original', 'Write the parser tests and the lexer', 'Add tests for the parser', false],
    ['only common words', 'Add the', 'Add the parser', false],
  ])('%s', (_name, short, long, expected) => {
    expect(abbreviates(short, long)).toBe(expected);
  });

  it('under a summary heading a shared telling word is enough; a shared common word is not', () => {
    expect(summarizes('Quickstart validation', 'Verify the implementation against specs/001-cart/quickstart.md 6-step guide')).toBe(true);
    expect(summarizes('i18n common.json keys', original)).toBe(true);
    expect(summarizes('Tag the release', 'Create the app')).toBe(false);
    expect(summarizes('Add the footer', 'Add the header')).toBe(false);
  });
});
