// The shape of lib/, read from its imports (type-only ones included): no module imports itself back through
// a circle, and imports run down the layers of docs/architecture.md ("Layers"), but for at most two that
// run back up, each with a comment on its line saying why (`// up: …`).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '..', '..');

/** Bottom to top: a module may import its own layer and those below. The longest matching prefix wins. */
export const LAYERS: readonly (readonly string[])[] = [
  ['lib/errors.ts', 'lib/package-files.ts', 'lib/deps.ts', 'lib/duration.ts', 'lib/task.ts', 'lib/markdown.ts', 'lib/completion.ts', 'lib/retry.ts', 'lib/redact/', 'lib/process/process-tree.ts', 'lib/recovery/crash-points.ts'],
  ['lib/repo/', 'lib/recovery/journal.ts'],
  ['lib/process/'],
  ['lib/config/', 'lib/gates.ts', 'lib/agents/', 'lib/sandbox/'],
  ['lib/events.ts'],
  ['lib/sources/types.ts', 'lib/progress/', 'lib/questions/'],
  ['lib/sources/'],
  ['lib/iteration/'],
  ['lib/landing/', 'lib/recovery/'],
  ['lib/pr/', 'lib/report/', 'lib/view/', 'lib/notify/', 'lib/control/', 'lib/serve/'],
  ['lib/session/'],
  ['lib/cli/'],
];

export function layerOf(file: string): number | undefined {
  let best: { layer: number; length: number } | undefined;
  LAYERS.forEach((prefixes, layer) => {
    for (const prefix of prefixes) {
      if ((file === prefix || (prefix.endsWith('/') && file.startsWith(prefix))) && (!best || prefix.length > best.length)) best = { layer, length: prefix.length };
    }
  });
  return best?.layer;
}

interface Edge {
  from: string;
  to: string;
  line: string;
}

function modules(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...modules(rel));
    else if (entry.name.endsWith('.ts')) out.push(rel);
  }
  return out;
}

/** Every import and re-export between lib modules, static or dynamic. */
export function importEdges(files: readonly string[], read: (file: string) => string): Edge[] {
  const known = new Set(files);
  const edges: Edge[] = [];
  for (const from of files) {
    for (const line of read(from).split('\n')) {
      for (const match of line.matchAll(/(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
        const to = path.posix.normalize(path.posix.join(path.posix.dirname(from), match[1]!));
        if (known.has(to)) edges.push({ from, to, line: line.trim() });
      }
    }
  }
  return edges;
}

/** The strongly connected components of more than one module (Tarjan). */
export function circles(files: readonly string[], edges: readonly Edge[]): string[][] {
  const next = new Map<string, string[]>(files.map((file) => [file, []]));
  for (const edge of edges) next.get(edge.from)!.push(edge.to);
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return found;
}

export function upward(edges: readonly Edge[]): Edge[] {
  return edges.filter((edge) => (layerOf(edge.from) ?? 0) < (layerOf(edge.to) ?? 0));
}

describe('the house (lib/)', () => {
  const files = modules('lib');
  const edges = importEdges(files, (file) => readFileSync(path.join(ROOT, file), 'utf8'));

  it('places every module in a layer', () => {
    expect(files.filter((file) => layerOf(file) === undefined)).toEqual([]);
  });

  it('has no circle of imports, type-only ones included', () => {
    expect(circles(files, edges)).toEqual([]);
  });

  it('runs imports down the layers, but for at most two that say why', () => {
    const up = upward(edges);
    expect(up.length).toBeLessThanOrEqual(2);
    expect(up.filter((edge) => !/\/\/ up: \S/.test(edge.line)).map((edge) => `${edge.from} → ${edge.to}`)).toEqual([]);
  });

  it('finds a circle and an upward import when there is one (the checks can fail)', () => {
    const planted = ['lib/repo/a.ts', 'lib/repo/b.ts', 'lib/cli/c.ts'];
    const text: Record<string, string> = {
      'lib/repo/a.ts': "import type { B } from './b.ts';",
      'lib/repo/b.ts': "import { a } from './a.ts';\nconst c = await import('../cli/c.ts');",
      'lib/cli/c.ts': '',
    };
    const plantedEdges = importEdges(planted, (file) => text[file]!);
    expect(circles(planted, plantedEdges)).toEqual([['lib/repo/a.ts', 'lib/repo/b.ts']]);
    expect(upward(plantedEdges).map((edge) => edge.to)).toEqual(['lib/cli/c.ts']);
  });
});
