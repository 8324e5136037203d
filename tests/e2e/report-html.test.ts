// Opens a rendered HTML report in headless Chromium (Debian's `chromium`), screenshots it, and checks the
// chart's pixels: the timeline must really render, offline, in a real browser.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { IterationRecord, RunSummary } from '../../lib/events.ts';
import { writeReports } from '../../lib/report/index.ts';
import { needsTool } from '../support/needs-tool.ts';
import { decodePng, type Image } from './png.ts';

const chromium = needsTool('chromium', { bins: ['chromium', 'chromium-browser'] });

type Hue = 'green' | 'red' | 'amber';

/** Counts strongly green, red and amber pixels inside a rectangle of the image. */
function countColours(image: Image, box: { x0: number; y0: number; x1: number; y1: number }): Record<Hue, number> {
  const counts: Record<Hue, number> = { green: 0, red: 0, amber: 0 };
  for (let y = box.y0; y < Math.min(box.y1, image.height); y += 1) {
    for (let x = box.x0; x < Math.min(box.x1, image.width); x += 1) {
      const at = (y * image.width + x) * 4;
      const [r, g, b] = [image.pixels[at]!, image.pixels[at + 1]!, image.pixels[at + 2]!];
      if (g > r + 60 && g > b + 60) counts.green += 1;
      else if (r > g + 120 && r > b + 120) counts.red += 1;
      else if (r > 170 && g > 120 && b < 90 && r - g < 90) counts.amber += 1;
    }
  }
  return counts;
}

function run(bin: string, args: string[], timeoutMs: number, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(bin, args, { timeout: timeoutMs, encoding: 'utf8', env }, (error, _stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stderr });
    });
  });
}

function summaryOfFour(): RunSummary {
  const base = Date.UTC(2026, 2, 3, 1, 0, 0);
  const outcomes: Array<IterationRecord['outcome']> = ['pass', 'fail', 'no_change', 'pass'];
  const records: IterationRecord[] = outcomes.map((outcome, index) => ({
    iteration: index + 1,
    taskId: `ws-9w6.${index + 2}`,
    taskTitle: index === 3 ? 'Render <html> & "quotes"' : `Task ${index + 1}`,
    outcome,
    reason: outcome === 'pass' ? 'task finished' : outcome === 'fail' ? 'agent still failing after 3 attempts' : 'nothing changed',
    attempts: outcome === 'fail' ? 3 : 1,
    startedAt: new Date(base + index * 120_000).toISOString(),
    durationMs: 100_000,
    tasksDone: outcome === 'pass' ? [`ws-9w6.${index + 2}`] : [],
    filesChanged: outcome === 'pass' ? ['src/app.ts'] : [],
    claimedComplete: outcome === 'pass',
    costUsd: 0.02,
    inputTokens: 1500,
    outputTokens: 300,
  }));
  return {
    status: 'limit_reached',
    exitCode: 2,
    message: 'iteration limit 4 reached',
    sessionId: '20260303-010000',
    source: 'beads',
    agent: 'claude',
    iterations: 4,
    tasksCompleted: 2,
    tasksRemaining: 2,
    startedAt: new Date(base).toISOString(),
    endedAt: new Date(base + 460_000).toISOString(),
    durationMs: 460_000,
    costUsd: 0.08,
    records,
  };
}

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('the HTML report in a real browser', () => {
  it.skipIf(chromium.skip)(chromium.title('renders the timeline chart offline in headless Chromium'), async () => {
    const bin = chromium.bin();
    dir = mkdtempSync(path.join(os.tmpdir(), 'ralph-report-html-'));
    const { html } = writeReports(dir, summaryOfFour());
    const shot = path.join(dir, 'shot.png');
    const result = await run(
      bin,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--hide-scrollbars',
        '--force-device-scale-factor=1',
        `--user-data-dir=${path.join(dir, 'profile')}`,
        `--screenshot=${shot}`,
        '--window-size=1200,900',
        `file://${html}`,
      ],
      120_000,
      // Its own HOME: chromium keeps crash-report settings in ~/.config and a dconf cache in ~/.cache.
      { ...process.env, HOME: dir },
    );
    expect(existsSync(shot), `chromium wrote no screenshot (exit ${result.code}): ${result.stderr.slice(-2000)}`).toBe(true);
    expect(statSync(shot).size).toBeGreaterThan(10_000);
    const image = decodePng(readFileSync(shot));
    expect([image.width, image.height]).toEqual([1200, 900]);
    // The whole page: the bars are the only large green/red/amber areas besides the status badge and legend.
    const whole = countColours(image, { x0: 0, y0: 0, x1: image.width, y1: image.height });
    expect(whole.green, JSON.stringify(whole)).toBeGreaterThan(2000);
    expect(whole.red, JSON.stringify(whole)).toBeGreaterThan(1000);
    expect(whole.amber, JSON.stringify(whole)).toBeGreaterThan(1000);
    // The chart area itself: find the rows holding bars, and check each colour shows up there.
    const rows: number[] = [];
    for (let y = 0; y < image.height; y += 1) {
      const line = countColours(image, { x0: 0, y0: y, x1: image.width, y1: y + 1 });
      if (line.green + line.red + line.amber > 60) rows.push(y);
    }
    expect(rows.length).toBeGreaterThan(40);
    const chart = countColours(image, { x0: 0, y0: rows[0]!, x1: image.width, y1: rows.at(-1)! + 1 });
    expect(chart.green).toBeGreaterThan(1500);
    expect(chart.red).toBeGreaterThan(1000);
  }, 150_000);
});
