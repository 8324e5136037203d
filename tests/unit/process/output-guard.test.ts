import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { guardOutputs, type WritableOutput } from '../../../lib/process/output-guard.ts';

/** A stream that records what it got and fails as told: by throwing, or by an 'error' event (as a pipe does). */
class FakeStream extends EventEmitter implements WritableOutput {
  written: string[] = [];
  throwing?: NodeJS.ErrnoException;
  isTTY = true;
  columns = 120;
  write(text: string): boolean {
    if (this.throwing) throw this.throwing;
    this.written.push(text);
    return true;
  }
}
const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`write ${code}`), { code });

describe('guardOutputs', () => {
  it('passes writes through and forwards isTTY and columns', () => {
    const stdout = new FakeStream();
    const stderr = new FakeStream();
    const lost: string[] = [];
    const out = guardOutputs({ stdout, stderr }, (stream, code) => lost.push(`${stream} ${code}`));
    out.stdout.write('a\n');
    out.stderr.write('b\n');
    expect(stdout.written).toEqual(['a\n']);
    expect(stderr.written).toEqual(['b\n']);
    expect([out.stderr.isTTY, out.stderr.columns]).toEqual([true, 120]);
    stderr.columns = 80;
    expect(out.stderr.columns).toBe(80);
    expect(lost).toEqual([]);
    expect(out.lost()).toBeUndefined();
  });

  it.each([
    ['EPIPE on stdout, as an error event (a pipe whose reader went away)', 'stdout', 'EPIPE', 'event'],
    ['EPIPE on stderr, as an error event', 'stderr', 'EPIPE', 'event'],
    ['EIO on stderr (the terminal is gone)', 'stderr', 'EIO', 'event'],
    ['ENOSPC on stdout, thrown (a redirect to a full disk)', 'stdout', 'ENOSPC', 'throw'],
    ['EPIPE on stderr, thrown', 'stderr', 'EPIPE', 'throw'],
  ] as const)('%s: reported once, and the stream swallows what follows', (_name, which, code, how) => {
    const streams = { stdout: new FakeStream(), stderr: new FakeStream() };
    const lost: string[] = [];
    const out = guardOutputs(streams, (stream, why) => lost.push(`${stream} ${why}`));
    if (how === 'event') streams[which].emit('error', errno(code));
    else streams[which].throwing = errno(code);
    expect(() => out[which].write('line\n')).not.toThrow();
    expect(lost).toEqual([`${which} ${code}`]);
    // Later writes are not tried, and a second error (every later write of a pipe fails too) says nothing new.
    streams[which].throwing = errno(code);
    out[which].write('more\n');
    streams[which].emit('error', errno(code));
    expect(lost).toEqual([`${which} ${code}`]);
    expect(out.lost()).toEqual({ stream: which, code });
    expect(streams[which].written).toEqual([]);
    // The other stream still works (stdout into a closed pipe, stderr still on the terminal).
    const other = which === 'stdout' ? 'stderr' : 'stdout';
    out[other].write('still here\n');
    expect(streams[other].written).toEqual(['still here\n']);
  });

  it('both streams into one pipe (2>&1 | head): the first failure is the one reported', () => {
    const streams = { stdout: new FakeStream(), stderr: new FakeStream() };
    const lost: string[] = [];
    const out = guardOutputs(streams, (stream, why) => lost.push(`${stream} ${why}`));
    streams.stderr.emit('error', errno('EPIPE'));
    streams.stdout.emit('error', errno('EPIPE'));
    out.stdout.write('x');
    expect(lost).toEqual(['stderr EPIPE']);
  });

  it('an error without a code counts as EIO', () => {
    const streams = { stdout: new FakeStream(), stderr: new FakeStream() };
    const lost: string[] = [];
    guardOutputs(streams, (stream, why) => lost.push(`${stream} ${why}`));
    streams.stdout.emit('error', new Error('gone'));
    expect(lost).toEqual(['stdout EIO']);
  });
});

describe('the exit code of a closed output', () => {
  it('OutputClosedError is an interruption with 141 (128 + SIGPIPE) and says which stream', async () => {
    const { InterruptedError, OutputClosedError, ExitCode, abortError } = await import('../../../lib/errors.ts');
    const error = new OutputClosedError('stderr', 'EPIPE');
    expect(error).toBeInstanceOf(InterruptedError);
    expect([error.exitCode, error.signal, ExitCode.outputClosed]).toEqual([141, 'SIGPIPE', 141]);
    expect(error.message).toBe("ralph's stderr closed (EPIPE: the reader of the pipe went away)");
    expect(new OutputClosedError('stdout', 'EIO').message).toBe("ralph's stdout closed (EIO)");
    const controller = new AbortController();
    controller.abort(error);
    expect(abortError(controller.signal)).toBe(error);
    expect([new InterruptedError('SIGINT').exitCode, new InterruptedError('SIGTERM').exitCode, new InterruptedError('SIGHUP').exitCode]).toEqual([130, 143, 129]);
  });
});
