import { UsageError } from '../errors.ts';
import { parseDuration } from '../duration.ts';
import { MAX_DURATION_MS, type OptionSpec } from './options.ts';

export type OptionValue = string | number | boolean | string[];

const TRUE_WORDS = new Set(['1', 'true', 'yes', 'on']);
const FALSE_WORDS = new Set(['0', 'false', 'no', 'off', '']);

/** Whether a boolean option's text says yes (`1`, `true`, `yes`, `on`, any case). */
export function saysTrue(text: string): boolean {
  return TRUE_WORDS.has(text.trim().toLowerCase());
}

/** Converts one raw value to the option's type; `where` names its origin for the error message. */
export function convertValue(spec: OptionSpec, raw: unknown, where: string): OptionValue {
  const fail = (expected: string): never => {
    throw new UsageError(`${where}: invalid value ${JSON.stringify(raw)}: expected ${expected}`);
  };
  switch (spec.kind) {
    case 'boolean': {
      if (typeof raw === 'boolean') return raw;
      const word = String(raw).trim().toLowerCase();
      if (TRUE_WORDS.has(word)) return true;
      if (FALSE_WORDS.has(word)) return false;
      return fail('true or false');
    }
    case 'int':
    case 'number': {
      const text = String(raw).trim();
      const pattern = spec.kind === 'int' ? /^\d+$/ : /^\d+(\.\d+)?$/;
      if (typeof raw !== 'number' && !pattern.test(text)) {
        return fail(spec.kind === 'int' ? 'a whole number' : 'a number');
      }
      const value = Number(raw);
      if (!Number.isFinite(value) || (spec.kind === 'int' && !Number.isInteger(value))) {
        return fail(spec.kind === 'int' ? 'a whole number' : 'a number');
      }
      if (spec.min !== undefined && value < spec.min) return fail(`a number of at least ${spec.min}`);
      if (spec.max !== undefined && value > spec.max) return fail(`a number of at most ${spec.max}`);
      return value;
    }
    case 'duration': {
      const value = parseDuration(String(raw));
      if (value === undefined) return fail('a duration such as 250ms, 30s, 5m or 2h');
      if (value > MAX_DURATION_MS) return fail('a duration of at most 24d');
      if (spec.min !== undefined && value < spec.min) return fail(`a duration of at least ${spec.min}ms`);
      return value;
    }
    case 'size': {
      const value = parseSize(String(raw));
      if (value === undefined) return fail('a size in bytes such as 65536, 512K, 64M or 1G');
      if (value !== 0 && spec.min !== undefined && value < spec.min) return fail(`a size of at least ${spec.min} bytes (or 0 for no limit)`);
      return value;
    }
    case 'string': {
      if (typeof raw !== 'string' && typeof raw !== 'number') return fail('a string');
      const text = String(raw);
      if (spec.choices && !spec.choices.includes(text)) return fail(`one of ${spec.choices.join(', ')}`);
      return text;
    }
    case 'list': {
      if (Array.isArray(raw)) return raw.map((item) => String(item));
      if (typeof raw === 'string') return [raw];
      return fail('a string or a list of strings');
    }
  }
}

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, kb: 1024, m: 1024 ** 2, mb: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3 };

/** `65536`, `512K`, `64M`, `1G` (powers of 1024) into bytes; undefined when malformed. */
export function parseSize(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  const unit = match ? SIZE_UNITS[match[2]!.toLowerCase()] : undefined;
  if (!match || unit === undefined) return undefined;
  const value = Math.round(Number(match[1]) * unit);
  return Number.isSafeInteger(value) ? value : undefined;
}
