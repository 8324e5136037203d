import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appendRun, previousFigures, readHistory, type RunRecord } from '../../bench/history.ts';
import { formatTable, type Row } from '../../bench/report.ts';

const row = (figure: string, result: string, verdict: Row['verdict'] = 'PASS', load?: string): Row => ({ benchmark: 'flood', figure, target: '< 150 MB', result, verdict, ...(load ? { load } : {}) });
const run = (date: string, rows: Row[]): RunRecord => ({ machine: { date, loadavg: '9.99' }, runs: [], rows });

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('bench history', () => {
  it('reads the older one-run results.json as one run, and nothing from an unreadable file', () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'bench-history-'));
    const file = path.join(dir, 'results.json');
    writeFileSync(file, JSON.stringify({ machine: { date: '2026-11-22T03:27:22Z', loadavg: '1.26' }, runs: [], rows: [row('peak RSS', '306 MB', 'FAIL')] }));
    expect(readHistory(file).runs).toHaveLength(1);
    writeFileSync(file, '{ cut short');
    expect(readHistory(file).runs).toEqual([]);
    expect(readHistory(path.join(dir, 'missing.json')).runs).toEqual([]);
  });

  it('keeps the last runs only', () => {
    let history = { runs: [] as RunRecord[] };
    for (let index = 0; index < 5; index += 1) history = appendRun(history, run(`2026-11-0${index + 1}`, []), 3);
    expect(history.runs.map((item) => item.machine.date)).toEqual(['2026-11-03', '2026-11-04', '2026-11-05']);
  });

  it('shows each figure beside the latest earlier run that measured it, with its verdict and load', () => {
    const history = {
      runs: [
        run('2026-11-20T10:00:00Z', [row('peak RSS', '330 MB', 'FAIL'), row('throughput', '112 MB/s', 'FAIL', '1.10→1.20')]),
        run('2026-11-21T10:00:00Z', [row('peak RSS', '306 MB', 'FAIL', '1.68→1.59')]),
      ],
    };
    const now = [row('peak RSS', '120 MB'), row('throughput', '230 MB/s'), row('new figure', '1')];
    expect(previousFigures(history, now)).toEqual(['306 MB FAIL (2026-11-21, load 1.68→1.59)', '112 MB/s FAIL (2026-11-20, load 1.10→1.20)', '']);
    const table = formatTable(now, previousFigures(history, now)).split('\n');
    expect(table[0]).toMatch(/\| target +\| result +\| verdict +\| previous run +\|/);
    expect(table[2]).toMatch(/\| 120 MB +\| PASS +\| 306 MB FAIL \(2026-11-21, load 1\.68→1\.59\) +\|/);
    expect(table[4]).toMatch(/\| PASS +\| - +\|$/);
  });
});
