import { describe, expect, it } from 'vitest';
import { parseArgv } from '../../../lib/cli/argv.ts';
import { UsageError } from '../../../lib/errors.ts';

describe('parseArgv', () => {
  it('defaults to the run command', () => {
    expect(parseArgv([]).command).toBe('run');
    expect(parseArgv(['--dry-run']).flags.get('dry-run')).toBe(true);
  });

  it('reads commands, values, inline values, short flags and passthrough', () => {
    const parsed = parseArgv(['resume', '--max-iterations', '7', '--model=opus', '-q', '--retry-delay', '250ms', '--', '--foo', 'bar']);
    expect(parsed.command).toBe('resume');
    expect(parsed.flags.get('max-iterations')).toBe(7);
    expect(parsed.flags.get('model')).toBe('opus');
    expect(parsed.flags.get('quiet')).toBe(true);
    expect(parsed.flags.get('retry-delay')).toBe(250);
    expect(parsed.passthrough).toEqual(['--foo', 'bar']);
  });

  it('negates booleans with --no-', () => {
    expect(parseArgv(['--no-json']).flags.get('json')).toBe(false);
  });

  it('turns -h and -V into help and version', () => {
    expect(parseArgv(['-h']).flags.get('help')).toBe(true);
    expect(parseArgv(['-V']).flags.get('version')).toBe(true);
  });

  it.each([
    [['--frobnicate'], /unknown option --frobnicate/],
    [['-Z'], /unknown option -Z/],
    [['--max-iterations', 'ten'], /--max-iterations: invalid value "ten": expected a whole number/],
    [['--max-iterations', '0'], /--max-iterations: invalid value "0": expected a number of at least 1/],
    [['--retry-delay', 'soon'], /--retry-delay: invalid value "soon": expected a duration/],
    [['--source', 'jira'], /--source: invalid value "jira": expected one of beads, speckit, prd/],
    [['--model'], /option --model needs a value/],
    [['--model', '--json'], /option --model needs a value/],
    [['launch'], /unknown command "launch"/],
  ])('rejects %j with one line naming the flag and value', (argv, message) => {
    expect(() => parseArgv(argv)).toThrow(UsageError);
    expect(() => parseArgv(argv)).toThrow(message);
  });
});
