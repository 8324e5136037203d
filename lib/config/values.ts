import { UsageError } from '../errors.ts';
import { parseDuration } from '../duration.ts';
import type { OptionSpec } from './options.ts';

export type OptionValue = string | number | boolean | string[];

const TRUE_WORDS = new Set(['1', 'true', 'yes', 'on']);
const FALSE_WORDS = new Set(['0', 'false', 'no', 'off', '']);

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
      return value;
    }
    case 'duration': {
      const value = parseDuration(String(raw));
      return value ?? fail('a duration such as 250ms, 30s, 5m or 2h');
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
