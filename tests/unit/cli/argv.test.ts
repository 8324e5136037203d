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

  it('reads sizes with units, and 0 for no limit', () => {
    expect(parseArgv(['--log-max-bytes', '64M']).flags.get('log-max-bytes')).toBe(64 * 1024 * 1024);
    expect(parseArgv(['--log-max-bytes', '0']).flags.get('log-max-bytes')).toBe(0);
    expect(parseArgv(['--progress-max-bytes', '262144']).flags.get('progress-max-bytes')).toBe(262_144);
    expect(parseArgv(['--timeout', '0']).flags.get('timeout')).toBe(0);
  });

  it('takes the flags each command reads, and --help and --version everywhere', () => {
    expect(parseArgv(['status', '--watch', '--json']).flags.get('watch')).toBe(true);
    expect(parseArgv(['stop', '--now']).flags.get('now')).toBe(true);
    expect(parseArgv(['serve', '--port', '0']).flags.get('port')).toBe(0);
    expect(parseArgv(['report', 'some-session']).positionals).toEqual(['some-session']);
    expect(parseArgv(['answer', 'T003', 'return 410, and log it']).positionals).toEqual(['T003', 'return 410, and log it']);
    expect(parseArgv(['pause', '--help']).flags.get('help')).toBe(true);
    expect(parseArgv(['resume', '--parallel', '2']).flags.get('parallel')).toBe(2);
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
    [['--max-iterations', '1000000000'], /--max-iterations: invalid value "1000000000": expected a number of at most 100000/],
    [['--timeout', '30d'], /--timeout: invalid value "30d": expected a duration of at most 24d/],
    [['--port', '70000'], /--port: invalid value "70000": expected a number of at most 65535/],
    [['--log-max-bytes', '10K'], /--log-max-bytes: invalid value "10K": expected a size of at least 65536 bytes \(or 0 for no limit\)/],
    [['--log-max-bytes', 'lots'], /--log-max-bytes: invalid value "lots": expected a size in bytes such as 65536, 512K, 64M or 1G/],
    [['--watch'], /--watch is not an option of 'ralph run': it is an option of 'ralph status'/],
    [['--dry-run', '--now'], /--now is not an option of 'ralph run': it is an option of 'ralph stop'/],
    [['status', '--parallel', '2'], /--parallel is not an option of 'ralph status': it is an option of 'ralph run'/],
    [['pause', '--now'], /--now is not an option of 'ralph pause': it is an option of 'ralph stop'/],
    [['report', 'a', 'b'], /'ralph report' takes at most 1 argument \(a session id\), got: a b/],
    [['run', 'extra'], /'ralph run' takes no arguments, got: extra/],
    [['answer', 'T003', 'return', '410'], /'ralph answer' takes at most 2 arguments \(the task and the answer, e\.g\. ralph answer T003 "410"\), got: T003 return 410/],
    [['answer', 'T003', '410', '--json'], /--json is not an option of 'ralph answer'/],
  ])('rejects %j with one line naming the flag and value', (argv, message) => {
    expect(() => parseArgv(argv)).toThrow(UsageError);
    expect(() => parseArgv(argv)).toThrow(message);
  });
});
