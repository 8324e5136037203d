// `ralph serve` in a real browser: headless Chromium opens the live page of a running loop, sees the
// running iteration, then the next one without a reload; its pause button goes through the control
// channel; the page keeps working once the run has ended. A screenshot of the live page is kept.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { needsTool } from '../support/needs-tool.ts';
import { launchChromium, type Browser, type Page } from './cdp.ts';
import { agentCalls, closeStep, FAST, makeSandbox, scenario, seedBeads, signalRalph, standardEpic, startRalph, waitFor, type Sandbox } from './helpers.ts';
import { decodePng } from './png.ts';
import { prdProject, report } from './projects.ts';
import { answeredFor, recordAsked } from '../../lib/questions/store.ts';

const chromium = needsTool('chromium', { bins: ['chromium', 'chromium-browser'] });

/** Outside the suite's private TMPDIR (emptied after the run) and outside the checkout: the screenshot stays. */
function artifactsDir(): string {
  if (process.env.RALPH_TEST_ARTIFACTS) return process.env.RALPH_TEST_ARTIFACTS;
  const tmp = os.tmpdir();
  return path.join(path.basename(tmp).startsWith('ralph-suite-') ? path.dirname(tmp) : tmp, 'ralph-test-artifacts');
}

let sandbox: Sandbox | undefined;
let browser: Browser | undefined;
const stops: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  browser?.close();
  browser = undefined;
  for (const stop of stops.splice(0)) await stop();
  sandbox?.cleanup();
  sandbox = undefined;
});

interface Seen {
  now: string;
  badge: string;
  rows: Array<[string, string]>;
  activity: string;
  marker: string | null;
  navigations: number;
  pauseShown: boolean;
  unpauseShown: boolean;
  reports: string[];
  updates: string;
  workers: string[];
}

const LOOK = `(() => {
  // Not before the whole page is parsed and its script ran: a look mid-parse sees the top of it only.
  if (document.readyState === 'loading' || !document.getElementById('controls')) return null;
  const text = (id) => (document.getElementById(id) || { textContent: '' }).textContent;
  return {
    now: text('now'),
    badge: text('badge'),
    rows: [...document.querySelectorAll('#timeline .row')].map((row) => [row.dataset.iteration, row.dataset.outcome]),
    activity: text('activity'),
    marker: window.__sameDocument || null,
    navigations: performance.getEntriesByType('navigation').length,
    pauseShown: !document.getElementById('controls').hidden && !document.getElementById('pause').hidden,
    unpauseShown: !document.getElementById('controls').hidden && !document.getElementById('unpause').hidden,
    reports: [...document.querySelectorAll('#reports a')].map((a) => a.getAttribute('href')),
    updates: text('footer'),
    workers: document.getElementById('workers-section').hidden ? [] : [...document.querySelectorAll('#workers tr[data-worker]')].map((row) => [...row.cells].slice(0, 3).map((cell) => cell.textContent).join(' | ')),
  };
})()`;

/**
 * Starts `ralph serve --port 0` in `box` and waits until it listens; its stop (first in `stops`) signals it
 * by its own PID, as Ctrl+C in its pane would, not through tsx's wrapper.
 */
async function startServe(box: Sandbox): Promise<{ serve: ReturnType<typeof startRalph>; servePid: () => number }> {
  const serve = startRalph(box, ['serve', '--port', '0']);
  const servePid = (): number => Number(/ralph serve \(PID (\d+)\)/.exec(serve.output().stderr)?.[1]);
  stops.unshift(async () => {
    if (servePid()) process.kill(servePid(), 'SIGINT');
    else serve.child.kill('SIGINT');
    await serve.done;
  });
  await waitFor(() => /^http:\/\/127\.0\.0\.1:\d+\/$/m.test(serve.output().stdout) && servePid() > 0, 30_000, `ralph serve to listen: ${serve.output().stderr}`);
  return { serve, servePid };
}

async function waitForPage(page: Page, check: (seen: Seen) => boolean, what: string): Promise<Seen> {
  let last: Seen | undefined;
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      last = (await page.evaluate<Seen | null>(LOOK)) ?? undefined;
      if (last && check(last)) return last;
      if (Date.now() > deadline) throw new Error(`timed out waiting for the page to show ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    throw new Error(`${(error as Error).message}\nlast seen: ${JSON.stringify(last, null, 2)}\nchromium: ${browser?.log().slice(-800)}`);
  }
}

type Box = { x: number; y: number; width: number; height: number };

/** Waits until the timeline's bar of `iteration` is drawn at least `width` pixels wide; its box. */
async function waitForBar(page: Page, iteration: number, width: number): Promise<Box> {
  const deadline = Date.now() + 30_000;
  let last: Box | undefined;
  for (;;) {
    last = await page.evaluate<Box>(barBox(iteration));
    if (last.width >= width) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting for the bar of iteration ${iteration} to be ${width} px wide: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Strongly green and strongly blue pixels inside a box of the screenshot. */
function colours(png: Buffer, box: Box): { green: number; blue: number; pixels: number } {
  const image = decodePng(png);
  let green = 0;
  let blue = 0;
  let pixels = 0;
  for (let y = Math.floor(box.y); y < Math.min(image.height, box.y + box.height); y += 1) {
    for (let x = Math.floor(box.x); x < Math.min(image.width, box.x + box.width); x += 1) {
      const at = (y * image.width + x) * 4;
      const [r, g, b] = [image.pixels[at]!, image.pixels[at + 1]!, image.pixels[at + 2]!];
      pixels += 1;
      if (g > r + 60 && g > b + 40) green += 1;
      else if (b > r + 100 && b > g + 40) blue += 1;
    }
  }
  return { green, blue, pixels };
}

const barBox = (iteration: number): string => `(() => { const r = document.querySelector('#timeline .row[data-iteration="${iteration}"] .bar').getBoundingClientRect(); return { x: r.x, y: r.y, width: r.width, height: r.height }; })()`;

describe('ralph serve in a browser', () => {
  it.skipIf(chromium.skip)(chromium.title('shows the running iteration, then the next one without a reload'), async () => {
    const bin = chromium.bin();
    const box = (sandbox = makeSandbox());
    seedBeads(box, standardEpic(2));
    const go = (n: number): string => path.join(box.root, `go-${n}`);
    scenario(box, [
      { waitFile: go(1), ...closeStep('ws-9w6.2') },
      { waitFile: go(2), ...closeStep('ws-9w6.3') },
    ]);
    const run = startRalph(box, FAST);
    stops.push(async () => {
      if (existsSync(path.join(box.repo, '.ralph.lock'))) signalRalph(box, 'SIGINT');
      await run.done;
    });
    await waitFor(() => agentCalls(box).length === 1, 30_000, 'the first agent');

    const { serve, servePid } = await startServe(box);
    const url = serve.output().stdout.trim().split('\n')[0]!;

    browser = launchChromium(bin, box.root);
    const page = await browser.open(url, { width: 1200, height: 1000 });
    const first = await waitForPage(page, (seen) => /Iteration 1\/50: ws-9w6\.2 Task 1: build part 1/.test(seen.now), 'iteration 1 running');
    expect(first.rows).toEqual([['1', 'running']]);
    expect(first.badge).toBe('running');
    expect(first.activity).toContain('iteration 1: ws-9w6.2 Task 1: build part 1');
    expect(first.pauseShown).toBe(true);
    // Anything the page had set survives only if the document is never reloaded.
    await page.evaluate('window.__sameDocument = "first load"');

    writeFileSync(go(1), '');
    const second = await waitForPage(page, (seen) => /Iteration 2\/50: ws-9w6\.3 Task 2: build part 2/.test(seen.now), 'iteration 2 running');
    expect(second.rows).toEqual([
      ['1', 'pass'],
      ['2', 'running'],
    ]);
    expect(second.marker).toBe('first load');
    expect(second.navigations).toBe(1);
    expect(second.activity).toMatch(/iteration 1 ws-9w6\.2: pass/);

    // The screenshot of the live page, once the running bar has grown wide enough to judge (it grows every
    // second): the bars are really drawn, the passed one green, the running one in blue stripes.
    await waitForBar(page, 2, 16);
    // Measure the running bar around the shot and keep what both agree on.
    const before = await page.evaluate<Box>(barBox(2));
    const png = await page.screenshot();
    const after = await page.evaluate<Box>(barBox(2));
    const shot = path.join(artifactsDir(), 'ralph-serve-live.png');
    mkdirSync(path.dirname(shot), { recursive: true });
    writeFileSync(shot, png);
    console.log(`screenshot of the live page: ${shot}`);
    expect(decodePng(png)).toMatchObject({ width: 1200, height: 1000 });
    const passed = colours(png, await page.evaluate<Box>(barBox(1)));
    expect(passed.green / passed.pixels, JSON.stringify(passed)).toBeGreaterThan(0.8);
    const running = colours(png, { ...before, width: Math.min(before.width, after.width) });
    expect(running.blue / running.pixels, JSON.stringify(running)).toBeGreaterThan(0.8);
    expect(running.pixels).toBeGreaterThan(16 * 4);

    // The pause button uses the channel of 'ralph pause': status.json says so, the page offers unpause.
    await page.evaluate("document.getElementById('pause').click()");
    await waitFor(() => JSON.parse(readFileSync(path.join(box.repo, '.ralph', 'status.json'), 'utf8')).pausedSince !== null, 15_000, 'the run to see the pause');
    const paused = await waitForPage(page, (seen) => seen.unpauseShown, 'the unpause button');
    expect(paused.now).toMatch(/paused since \d\d:\d\d:\d\d: the current iteration finishes/);
    await page.evaluate("document.getElementById('unpause').click()");
    await waitForPage(page, (seen) => seen.pauseShown && !/paused since/.test(seen.now), 'the pause lifted');

    // The run ends; the page follows without a reload and links the new report.
    writeFileSync(go(2), '');
    const result = await run.done;
    expect(result.code, result.stderr).toBe(0);
    const ended = await waitForPage(page, (seen) => seen.badge === 'completed' && seen.reports.length > 0, 'the end of the run');
    expect(ended.now).toMatch(/completed: all tasks of epic ws-9w6 "Feature: ralph-automation" are complete \(exit 0, ended \d\d:\d\d:\d\d\)/);
    expect(ended.rows).toEqual([
      ['1', 'pass'],
      ['2', 'pass'],
    ]);
    expect(ended.marker).toBe('first load');
    expect(ended.pauseShown).toBe(false);
    const report = await page.evaluate<string>(`fetch(${JSON.stringify(ended.reports.find((href) => href.endsWith('.html')))}).then((response) => response.text())`);
    expect(report).toContain('<svg');

    browser.close();
    browser = undefined;
    process.kill(servePid(), 'SIGINT');
    const served = await serve.done;
    stops.shift();
    expect(served.code, served.stderr).toBe(0);
  }, 120_000);

  it.skipIf(chromium.skip)(chromium.title('shows the workers of a --parallel 2 run side by side'), async () => {
    const bin = chromium.bin();
    const box = (sandbox = makeSandbox({ branch: 'ralph/demo' }));
    const stories = Array.from({ length: 2 }, (_, index) => ({ id: `US-00${index + 1}`, title: `Story ${index + 1}`, description: 'd', acceptanceCriteria: ['works'], priority: index + 1, passes: false, notes: '' }));
    prdProject(box, { project: 'Demo', branchName: 'ralph/demo', description: 'demo', userStories: stories });
    const go = path.join(box.root, 'go');
    const file = path.join(box.root, 'scenario.json');
    writeFileSync(file, JSON.stringify({ byPrompt: [1, 2].map((n) => ({ match: `**US-00${n}**`, steps: [{ waitFile: go, write: { [`story-${n}.txt`]: `story ${n}\n` }, lines: [report('completed')] }] })), steps: [{ lines: [report('failed')] }] }));
    box.env.FAKE_AGENT_SCENARIO = file;
    const run = startRalph(box, ['--parallel', '2', ...FAST]);
    stops.push(async () => {
      if (existsSync(path.join(box.repo, '.ralph.lock'))) signalRalph(box, 'SIGINT');
      await run.done;
    });
    await waitFor(() => agentCalls(box).length === 2, 30_000, 'two agents');
    const { serve, servePid } = await startServe(box);
    browser = launchChromium(bin, box.root);
    const page = await browser.open(serve.output().stdout.trim().split('\n')[0]!, { width: 1200, height: 1000 });
    const both = await waitForPage(page, (seen) => seen.workers.length === 2, 'two workers');
    expect(both.workers.map((row) => row.replace(/ \| #\d \| /, ' | ')).sort()).toEqual(['w1 | US-001 Story 1', 'w2 | US-002 Story 2'].sort());
    expect(both.rows.map(([, outcome]) => outcome)).toEqual(['running', 'running']);
    expect(both.now).toMatch(/Iteration [12]\/10: US-001 Story 1/);
    expect(both.now).toMatch(/Iteration [12]\/10: US-002 Story 2/);
    expect(both.now).toContain('worker w1');
    expect(both.now).toContain('worker w2');
    writeFileSync(go, '');
    expect((await run.done).code).toBe(0);
    const ended = await waitForPage(page, (seen) => seen.badge === 'completed', 'the end');
    expect(ended.workers).toEqual([]);
    expect(ended.rows.map(([, outcome]) => outcome)).toEqual(['pass', 'pass']);
  }, 120_000);

  it.skipIf(chromium.skip)(chromium.title('lists a question with an answer box; what is typed survives updates; Answer records it'), async () => {
    const bin = chromium.bin();
    const box = (sandbox = makeSandbox());
    recordAsked(box.repo, { source: 'speckit', scope: '001-demo', taskId: 'T002', taskTitle: 'Write greet()', question: 'Should greet() say "Hello" or "Hi"?', iteration: 1, askedAt: new Date().toISOString() });
    const { serve } = await startServe(box);
    browser = launchChromium(bin, box.root);
    const page = await browser.open(serve.output().stdout.trim().split('\n')[0]!, { width: 1200, height: 1000 });
    const QUESTIONS = `(() => { const section = document.getElementById('questions-section'); if (!section || section.hidden) return null; const box = document.querySelector('#questions textarea'); return { text: document.getElementById('questions').textContent, typed: box ? box.value : null }; })()`;
    const look = async (check: (seen: { text: string; typed: string | null }) => boolean, what: string) => {
      let seen: { text: string; typed: string | null } | null = null;
      const deadline = Date.now() + 30_000;
      for (;;) {
        seen = await page.evaluate<{ text: string; typed: string | null } | null>(QUESTIONS);
        if (seen && check(seen)) return seen;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(seen)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    await look((seen) => seen.text.includes('Should greet() say "Hello" or "Hi"?') && seen.typed === '', 'the question and its box');
    await page.evaluate(`document.querySelector('#questions textarea').value = 'Hello, with a comma'`);
    // Another question arrives: the list is rebuilt, the answer being typed stays.
    recordAsked(box.repo, { source: 'speckit', scope: '001-demo', taskId: 'T004', taskTitle: 'Write farewell()', question: 'Bye or goodbye?', iteration: 3, askedAt: new Date().toISOString() });
    const rebuilt = await look((seen) => seen.text.includes('Bye or goodbye?'), 'the second question');
    expect(rebuilt.typed).toBe('Hello, with a comma');
    await page.evaluate(`document.querySelector('#questions button[type=submit]').click()`);
    await look((seen) => seen.text.includes('answered: Hello, with a comma'), 'the answer shown');
    expect(answeredFor(box.repo, { source: 'speckit', scope: '001-demo', taskId: 'T002' })).toMatchObject([{ answer: 'Hello, with a comma' }]);
  }, 120_000);
});
