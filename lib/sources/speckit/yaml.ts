// A small, strict reader for the YAML Spec Kit writes into .specify/extensions.yml (PyYAML's block style:
// mappings, sequences at or under their key, plain and quoted scalars, long scalars folded onto indented
// lines). Pure: text in, a tree with line numbers out. What it does not read (anchors, tags, block
// scalars, nested flow collections, tabs in indentation) is an error naming the line, never a guess: a
// file ralph misreads would run the wrong hooks.

export type YamlNode =
  | { kind: 'map'; line: number; entries: Map<string, { line: number; value: YamlNode }> }
  | { kind: 'seq'; line: number; items: YamlNode[] }
  | { kind: 'scalar'; line: number; value: string | number | boolean | null };

/** A line the reader cannot take: its 1-based number and why. */
export class YamlError extends Error {
  constructor(
    readonly line: number,
    readonly why: string,
  ) {
    super(`line ${line}: ${why}`);
  }
}

interface Line {
  number: number;
  indent: number;
  /** The content after the indentation, comments removed, trimmed at the end. */
  text: string;
}

/** Parses `text`; an empty document is null. Throws YamlError. */
export function parseYaml(text: string): YamlNode | null {
  const lines = toLines(text);
  if (lines.length === 0) return null;
  const reader = { lines, at: 0 };
  const node = readBlock(reader, lines[0]!.indent);
  const rest = lines[reader.at];
  if (rest) throw new YamlError(rest.number, rest.indent > 0 ? 'indented deeper than the mapping or list it follows' : 'a second document or a value after the end');
  return node;
}

function toLines(text: string): Line[] {
  const out: Line[] = [];
  text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .forEach((raw, index) => {
      const number = index + 1;
      if (/^\s*(#.*)?$/.test(raw)) return;
      if ((raw === '---' || raw === '...') && out.length === 0) return;
      if (raw === '---' || raw === '...') throw new YamlError(number, 'more than one YAML document');
      const indent = /^ */.exec(raw)![0].length;
      if (raw[indent] === '\t') throw new YamlError(number, 'a tab in the indentation (YAML indents with spaces)');
      out.push({ number, indent, text: stripComment(raw.slice(indent)).trimEnd() });
    });
  return out;
}

/** The line without a ` # comment` outside quotes. */
function stripComment(text: string): string {
  let quote: string | undefined;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index]!;
    if (quote) {
      if (char === quote) quote = undefined;
    } else if (char === "'" || char === '"') quote = char;
    else if (char === '#' && (index === 0 || text[index - 1] === ' ')) return text.slice(0, index);
  }
  return text;
}

type Reader = { lines: Line[]; at: number };

const KEY = /^((?:[^\s:#'"[\]{},&*!|>%@`-]|-(?=\S))[^:#]*?|'[^']*'|"[^"]*")\s*:(?:\s+(.*))?$/;

function readBlock(reader: Reader, indent: number): YamlNode {
  const first = reader.lines[reader.at]!;
  if (first.text === '-' || first.text.startsWith('- ')) return readSeq(reader, indent);
  if (KEY.test(first.text)) return readMap(reader, indent);
  // A value on its own line under its key is YAML, but not what Spec Kit writes: most often a lost colon.
  throw new YamlError(first.number, `"${first.text}" is not a "key: value" line`);
}

function readMap(reader: Reader, indent: number): YamlNode {
  const entries = new Map<string, { line: number; value: YamlNode }>();
  const start = reader.lines[reader.at]!.number;
  while (reader.at < reader.lines.length) {
    const line = reader.lines[reader.at]!;
    if (line.indent < indent) break;
    if (line.indent > indent) throw new YamlError(line.number, 'indented deeper than the mapping it belongs to');
    const match = KEY.exec(line.text);
    if (!match) throw new YamlError(line.number, line.text.startsWith('-') ? 'a list item where a "key: value" line was expected' : `"${line.text}" is not a "key: value" line`);
    const key = unquoteKey(match[1]!.trim());
    if (entries.has(key)) throw new YamlError(line.number, `the key "${key}" is written twice`);
    reader.at += 1;
    const rest = match[2]?.trim() ?? '';
    let value: YamlNode;
    if (rest !== '') value = readScalar(rest, line, reader, indent);
    else {
      const next = reader.lines[reader.at];
      // PyYAML writes a list under its key at the key's own indentation.
      const nested = next && (next.indent > indent || (next.indent === indent && (next.text === '-' || next.text.startsWith('- '))));
      value = nested ? readBlock(reader, next.indent) : { kind: 'scalar', line: line.number, value: null };
    }
    entries.set(key, { line: line.number, value });
  }
  return { kind: 'map', line: start, entries };
}

function readSeq(reader: Reader, indent: number): YamlNode {
  const items: YamlNode[] = [];
  const start = reader.lines[reader.at]!.number;
  while (reader.at < reader.lines.length) {
    const line = reader.lines[reader.at]!;
    if (line.indent < indent || !(line.text === '-' || line.text.startsWith('- '))) {
      if (line.indent > indent) throw new YamlError(line.number, 'indented deeper than the list it belongs to');
      break;
    }
    if (line.indent > indent) throw new YamlError(line.number, 'indented deeper than the list it belongs to');
    const after = line.text.slice(1).replace(/^ +/, '');
    const offset = line.text.length - after.length;
    if (after === '') {
      reader.at += 1;
      const next = reader.lines[reader.at];
      items.push(next && next.indent > indent ? readBlock(reader, next.indent) : { kind: 'scalar', line: line.number, value: null });
    } else if (KEY.test(after) || after === '-' || after.startsWith('- ')) {
      // `- key: value` opens a mapping whose other keys stand under the first one.
      reader.lines[reader.at] = { number: line.number, indent: indent + offset, text: after };
      items.push(readBlock(reader, indent + offset));
    } else {
      reader.at += 1;
      items.push(readScalar(after, line, reader, indent));
    }
  }
  return { kind: 'seq', line: start, items };
}

/** A scalar starting with `text` on `line`; a long one goes on over lines indented deeper than `indent`. */
function readScalar(text: string, line: Line, reader: Reader, indent: number): YamlNode {
  const scalar = (value: string | number | boolean | null): YamlNode => ({ kind: 'scalar', line: line.number, value });
  const first = text[0]!;
  if ('&*!|>%@`'.includes(first)) throw new YamlError(line.number, `ralph reads plain YAML only (no anchors, aliases, tags or block scalars): "${text}"`);
  if (first === '[' || first === '{') return readFlow(text, line);
  let whole = text;
  if (first === "'" || first === '"') {
    while (!closed(whole, first)) {
      const next = reader.lines[reader.at];
      if (!next || next.indent <= indent) throw new YamlError(line.number, `a quoted value that is never closed (${first})`);
      whole += ` ${next.text.trim()}`;
      reader.at += 1;
    }
    const end = closingQuote(whole, first);
    if (whole.slice(end + 1).trim() !== '') throw new YamlError(line.number, `text after the closing quote: "${whole}"`);
    return scalar(first === "'" ? whole.slice(1, end).replace(/''/g, "'") : unescape(whole.slice(1, end), line.number));
  }
  // Plain: continuation lines are deeper than the key and are no entries of their own.
  for (let next = reader.lines[reader.at]; next && next.indent > indent && !KEY.test(next.text) && !next.text.startsWith('- '); next = reader.lines[reader.at]) {
    whole += ` ${next.text.trim()}`;
    reader.at += 1;
  }
  if (/:\s/.test(whole) || whole.endsWith(':')) throw new YamlError(line.number, `": " inside a plain value: quote it ("${whole}")`);
  return scalar(typed(whole));
}

function closed(text: string, quote: string): boolean {
  return closingQuote(text, quote) > 0;
}

/** Index of the quote that closes `text` (which opens with it), or -1. */
function closingQuote(text: string, quote: string): number {
  for (let index = 1; index < text.length; index += 1) {
    const char = text[index]!;
    if (quote === '"' && char === '\\') index += 1;
    else if (char === quote) {
      if (quote === "'" && text[index + 1] === "'") index += 1;
      else return index;
    }
  }
  return -1;
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', '"': '"', '\\': '\\', '/': '/', r: '\r', '0': '\0', ' ': ' ' };

function unescape(body: string, line: number): string {
  return body.replace(/\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)/g, (_, code: string) => {
    if (code.length > 1) return String.fromCharCode(parseInt(code.slice(1), 16));
    const known = ESCAPES[code];
    if (known === undefined) throw new YamlError(line, `an unknown escape \\${code} in a double-quoted value`);
    return known;
  });
}

function unquoteKey(key: string): string {
  return key.startsWith("'") || key.startsWith('"') ? key.slice(1, -1) : key;
}

/** `[]`, `{}` and a one-line list of plain or quoted scalars (`[git, 'my-ext']`). */
function readFlow(text: string, line: Line): YamlNode {
  if (/^\{\s*\}$/.test(text)) return { kind: 'map', line: line.number, entries: new Map() };
  const list = /^\[(.*)\]$/.exec(text);
  if (!list || /[[\]{}]/.test(list[1]!)) throw new YamlError(line.number, `ralph reads flow collections only as [] , {} or a one-line list of values: "${text}"`);
  const items = list[1]!.trim() === '' ? [] : list[1]!.split(',').map((item) => item.trim());
  return {
    kind: 'seq',
    line: line.number,
    items: items.map((item) => ({ kind: 'scalar', line: line.number, value: /^'.*'$|^".*"$/.test(item) ? item.slice(1, -1) : typed(item) })),
  };
}

/** A plain scalar's value: null, a boolean, an integer, or the text. */
function typed(text: string): string | number | boolean | null {
  if (/^(?:~|null|Null|NULL)$/.test(text)) return null;
  if (/^(?:true|True|TRUE)$/.test(text)) return true;
  if (/^(?:false|False|FALSE)$/.test(text)) return false;
  if (/^[-+]?\d+$/.test(text)) return Number(text);
  return text;
}
