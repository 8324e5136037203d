// What a secret looks like: the environment variables whose values are secret, and the well-known token
// shapes (API keys, GitHub and Slack tokens, AWS access keys) found in text whatever their origin.

/** Substrings of an environment variable name that mark its value as secret (case-insensitive). */
export const SECRET_NAME_PARTS = ['KEY', 'TOKEN', 'SECRET', 'PASSWORD', 'CREDENTIAL'] as const;

/** Values shorter than this are never treated as secrets: too many ordinary words would match. */
export const MIN_SECRET_LENGTH = 8;

/** A token shape: fixed prefixes, then a body of allowed bytes. */
export interface TokenShape {
  /** The name shown in `[redacted:NAME]`. */
  name: string;
  prefixes: readonly string[];
  /** Whether a byte may appear in the body. */
  body: (byte: number) => boolean;
  minBody: number;
  maxBody: number;
  /** The body must hold a digit (keeps `sk-` from matching hyphenated words). */
  needsDigit?: boolean;
}

const isDigit = (byte: number): boolean => byte >= 48 && byte <= 57;
const isUpper = (byte: number): boolean => byte >= 65 && byte <= 90;
const isLower = (byte: number): boolean => byte >= 97 && byte <= 122;
const isAlnum = (byte: number): boolean => isDigit(byte) || isUpper(byte) || isLower(byte);
const DASH = 45;
const UNDERSCORE = 95;

/** Bytes a token is made of: `[A-Za-z0-9_-]`. A token starts where the byte before is not one of them. */
export const isTokenByte = (byte: number): boolean => isAlnum(byte) || byte === DASH || byte === UNDERSCORE;

/** Longest body any shape takes; longer runs are cut there (no real token is this long). */
export const MAX_SHAPE_BODY = 256;

/** Most specific first: `sk-ant-` before `sk-`. */
export const TOKEN_SHAPES: readonly TokenShape[] = [
  { name: 'anthropic-key', prefixes: ['sk-ant-'], body: isTokenByte, minBody: 8, maxBody: MAX_SHAPE_BODY },
  { name: 'openai-key', prefixes: ['sk-'], body: isTokenByte, minBody: 20, maxBody: MAX_SHAPE_BODY, needsDigit: true },
  { name: 'github-pat', prefixes: ['github_pat_'], body: (byte) => isAlnum(byte) || byte === UNDERSCORE, minBody: 20, maxBody: MAX_SHAPE_BODY },
  { name: 'github-token', prefixes: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'], body: isAlnum, minBody: 20, maxBody: MAX_SHAPE_BODY },
  { name: 'aws-access-key', prefixes: ['AKIA', 'ASIA'], body: (byte) => isUpper(byte) || isDigit(byte), minBody: 16, maxBody: 16 },
  { name: 'slack-token', prefixes: ['xoxb-', 'xoxp-', 'xoxa-', 'xoxr-', 'xoxs-'], body: (byte) => isAlnum(byte) || byte === DASH, minBody: 10, maxBody: MAX_SHAPE_BODY },
];

/** The longest a shape match can be (prefix and body). */
export const MAX_SHAPE_LENGTH = Math.max(...TOKEN_SHAPES.map((shape) => Math.max(...shape.prefixes.map((prefix) => prefix.length)) + shape.maxBody));

/**
 * One prefix keyed by its anchor: the first `-` or `_` in it, else its `I` (AKIA). The scanner looks for
 * anchor bytes with memchr-fast Buffer.indexOf and checks the few bytes around each hit, instead of
 * testing every position of the output.
 */
export interface AnchoredPrefix {
  shape: TokenShape;
  prefix: Buffer;
  /** Offset of the anchor byte inside the prefix. */
  offset: number;
}

function anchorOf(prefix: string): number {
  for (const anchor of ['-', '_', 'I']) {
    const at = prefix.indexOf(anchor);
    if (at !== -1) return at;
  }
  throw new Error(`token prefix ${prefix} has no anchor byte`);
}

/** The prefixes grouped by anchor byte. */
export function anchoredPrefixes(shapes: readonly TokenShape[] = TOKEN_SHAPES): Map<number, AnchoredPrefix[]> {
  const byAnchor = new Map<number, AnchoredPrefix[]>();
  for (const shape of shapes) {
    for (const prefix of shape.prefixes) {
      const offset = anchorOf(prefix);
      const anchor = prefix.charCodeAt(offset);
      const list = byAnchor.get(anchor) ?? [];
      list.push({ shape, prefix: Buffer.from(prefix, 'latin1'), offset });
      byAnchor.set(anchor, list);
    }
  }
  return byAnchor;
}

/** Whether an environment variable's name marks its value as secret. */
export function isSecretName(name: string, extra: readonly string[] = []): boolean {
  const upper = name.toUpperCase();
  if (SECRET_NAME_PARTS.some((part) => upper.includes(part))) return true;
  return extra.some((pattern) => globMatch(pattern.toUpperCase(), upper));
}

/** `*` matches any run of characters; everything else is literal. */
export function globMatch(pattern: string, text: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === text;
  if (!text.startsWith(parts[0]!) || !text.endsWith(parts.at(-1)!)) return false;
  let at = parts[0]!.length;
  for (const part of parts.slice(1, -1)) {
    const found = text.indexOf(part, at);
    if (found === -1) return false;
    at = found + part.length;
  }
  return at <= text.length - parts.at(-1)!.length;
}
